"""The kill trials' pieces: a project, an agent with a background child, a `git` that kills specd at a commit.

Every process of one specd invocation carries ``KILLT_MARK=<session>:<n>`` (inherited from specd's
environment, through the jail, down to the agent's own background ``sleep``, which leaves the agent's
process group and session). The `git` placed first on PATH hands every call to the real git, except a
commit: then ``COMMIT`` (a Python script) first looks for any live process carrying an earlier
invocation's mark (a process of a killed run still alive while the next run commits: a violation,
written to ``violations.txt``), then, when the invocation's plan says this is the commit to kill at,
kill -9s the run (its pid is in ``target-<n>``) before or after the real commit.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import forked

AGENT = r'''
import json, os, random, subprocess, sys, time
from pathlib import Path
sys.stdin.read()
task, step, phase = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"], os.environ["SPECD_PHASE"]
# A child of the agent's own that leaves its group and session and drops the run's owner mark: only the jail's
# PID namespace, or outside the jail the keeper (specd/system/keeper.py), can find it. KILLT_MARK stays: the test's.
subprocess.Popen(["sleep", "120"], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "SPECD_OWNER"})
time.sleep(random.uniform(0.02, 0.2))
work = Path("work")
work.mkdir(exist_ok=True)
(work / f"{task}-{step}-{phase or 'none'}.txt").write_text(f"made by {task} {step} {phase}\n")
if step == "b":
    Path(os.environ["SPECD_TASK_DIR"], "ROADMAP.md").write_text("### Phase 1: One\n\n### Phase 2: Two\n")
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": step}))
'''

GIT = """#!/bin/sh
case " $* " in
  *" commit "*) exec "$KILLT_PYTHON" -S "$KILLT_DIR/commit.py" "$@" ;;
esac
exec "$KILLT_GIT" "$@"
"""

COMMIT = r'''
import fcntl, os, signal, subprocess, sys, time
here, mark, real = os.environ["KILLT_DIR"], os.environ["KILLT_MARK"], os.environ["KILLT_GIT"]
args = sys.argv[1:]
message = args[args.index("-m") + 1] if "-m" in args else ""
session, number = mark.rsplit(":", 1)
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        command = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, IndexError):
        continue
    for item in environ:
        # an earlier invocation's process (a killed run's git commit that outlived it may see a later one)
        if item.startswith(f"KILLT_MARK={session}:".encode()) and int(item.split(b":")[-1]) < int(number) \
                and state not in ("Z", "X"):
            with open(os.path.join(here, "violations.txt"), "a") as out:
                out.write(f"{item.decode()} pid {pid} ({command.strip()}) alive at {mark}'s commit {message!r}\n")
plan = os.environ.get("KILLT_PLAN", "")
chosen = False
if plan and (" complete" in message or "run state COMPLETE" in message):
    with open(os.path.join(here, f"count-{number}"), "a+") as count:
        fcntl.flock(count, fcntl.LOCK_EX)
        count.seek(0)
        seen = len(count.read()) + 1
        count.write("x")
        count.flush()
    chosen = seen == int(plan.split(":")[0])
if not chosen:
    os.execv(real, [real, *args])
target = int(open(os.path.join(here, f"target-{number}")).read())
with open(os.path.join(here, "kills.txt"), "a") as out:
    out.write(f"{plan} {message}\n")
code = subprocess.run([real, *args], check=False).returncode if plan.endswith(":after") else 1
parent = os.getppid()
os.kill(target, signal.SIGKILL)
# The run is killed here: its specd that called this git (the target, or a task's run under `specd run`, which
# dies with it) must not see this git's end first.
deadline = time.monotonic() + 10
while os.getppid() == parent and time.monotonic() < deadline:
    time.sleep(0.002)
sys.exit(code)
'''

WORKFLOW = "---\ndescription: the work\noutcomes: [\"done\"]\n---\n\n# work\n\nDo the work.\n"
PIPELINE = {"schema_version": "1.0", "pipelines": {
    "main": [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md"},
             {"name": "p", "pipeline": "phase", "foreach": "phases"}],
    "phase": [{"name": "x", "workflow": "work.md"}]}}
STEPS = ("a", "b", "x (phase 01)", "x (phase 02)")  # what each task's commits must name, once each
FILES = {"a": "a-none", "b": "b-none", "x (phase 01)": "x-01", "x (phase 02)": "x-02"}
IDENTITY = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}
COMPLETE = re.compile(r"^docs\((?P<task>[^)]+)\): (?P<labels>.+?) complete(?: \(phase (?P<phase>[\d.]+)\))?"
                      r"(?: \((?:recovered after an interrupted run|held for a secret, committed as approved)\))?$")


class KillProject:
    def __init__(self, base: Path, tasks: tuple[str, ...], session: str, jailed: bool = True) -> None:
        self.root, self.dir, self.session = base / "proj", base / "kills", session
        self.root.mkdir(parents=True)
        self.dir.mkdir()
        real = shutil.which("git")
        assert real is not None
        (self.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        (self.dir / "commit.py").write_text(COMMIT, encoding="utf-8")
        (self.dir / "bin").mkdir()
        (self.dir / "bin" / "git").write_text(GIT, encoding="utf-8")
        (self.dir / "bin" / "git").chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if k not in IDENTITY and k != "ANTHROPIC_API_KEY"}
        self.env.update(NO_COLOR="1", TERM="dumb", PYTHONDONTWRITEBYTECODE="1", KILLT_DIR=str(self.dir),
                        KILLT_GIT=real, KILLT_PYTHON=sys.executable)
        self.git("init", "-q")
        for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
            self.git("config", key, value)
        self.specd_ok("init")
        pipeline = PIPELINE if jailed else {**PIPELINE, "agent": {"sandbox": False}}  # then the keeper's work
        (self.root / ".specd/pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
        (self.root / ".specd/workflows").mkdir(exist_ok=True)
        (self.root / ".specd/workflows/work.md").write_text(WORKFLOW, encoding="utf-8")
        for task in tasks:
            self.specd_ok("new", task)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")

    def git(self, *args: str, where: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=where or self.root, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout

    def specd_ok(self, *args: str) -> None:
        done = forked.run([sys.executable, "-m", "specd", *args], cwd=self.root, env=self.env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    def start(self, number: int, plan: str, *args: str) -> subprocess.Popen[str]:
        """specd with the wrapper first on PATH, as invocation ``number``; its pid is in ``target-<number>``
        before specd runs (the shell writes it, then becomes specd)."""
        env = {**self.env, "PATH": f"{self.dir / 'bin'}{os.pathsep}{self.env['PATH']}",
               "KILLT_MARK": f"{self.session}:{number}", "KILLT_PLAN": plan}
        agent = f"cmd:{sys.executable} {self.dir / 'agent.py'}"
        script = 'echo $$ > "$KILLT_DIR/target-$0"; exec "$@"'
        return subprocess.Popen(["sh", "-c", script, str(number), sys.executable, "-m", "specd", *args, "--auto",
                                 "--agent", agent], cwd=self.root, env=env, text=True, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

    def violations(self) -> list[str]:
        path = self.dir / "violations.txt"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def kills_at_commits(self) -> int:
        path = self.dir / "kills.txt"
        return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0

    def check_task(self, task: str, tree: Path, ref: str = "HEAD") -> None:
        """Each step of ``task`` has exactly one commit of its own holding its file, and no other commit holds
        it; the branch ends with the task's final commit; the tree is clean."""
        log = self.git("log", "--reverse", "--format=%x00%s", "--name-only", "--no-renames", ref, where=tree)
        commits = [(block.splitlines()[0], [f for f in block.splitlines()[1:] if f])
                   for block in log.split("\0")[1:]]
        named: dict[str, list[str]] = {step: [] for step in STEPS}
        for subject in (s for s, _ in commits if s.startswith(f"docs({task}):")):
            match = COMPLETE.match(subject)
            if match is None:
                continue
            labels = match["labels"].split(", ")
            if match["phase"]:
                labels = [f"{label} (phase {match['phase']})" for label in labels]
            assert len(labels) == 1, f"{task}: one commit for several steps: {subject}"
            assert labels[0] in named, f"{task}: a commit for an unknown step: {subject}"
            named[labels[0]].append(subject)
        for step in STEPS:
            assert len(named[step]) == 1, f"{task}: step {step} has {len(named[step])} commits: {named[step]}"
            path = f"work/{task}-{FILES[step]}.txt"
            holders = [subject for subject, files in commits if path in files]
            assert holders == named[step], f"{task}: {path} is in {holders}, not only in {named[step]}"
        assert commits[-1][0] == f"docs({task}): run state COMPLETE", f"{task}: the branch ends with {commits[-1]}"
        status = self.git("status", "--porcelain", where=tree)
        assert status == "", f"{task}: {tree} is not clean:\n{status}"


def kill_marked(session: str) -> None:
    """The test's own cleanup: every process still carrying this session's mark."""
    wanted = f"KILLT_MARK={session}:".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if any(item.startswith(wanted) for item in (entry / "environ").read_bytes().split(b"\0")):
                os.kill(int(entry.name), signal.SIGKILL)
