"""The executor contract's fixture: a real repository, a command agent with a ledger, one executor behind it.

The agent sleeps a little, writes ``out-<task>-<step>.txt`` and appends ``<task> <step> <start> <end>`` to
``ledger-<task>.txt`` in the tree it runs in (its worktree: the jail lets it write there and nowhere else).
The test reads every worktree's ledger. ``hold`` in the harness folder makes the agent wait there until it is
removed, so the test can kill the executor in the middle of a step.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forked

AGENT = r'''
import json, os, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
task, step = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"]
sys.stdin.read()
start = time.time()
if (HERE / f"hold-{task}-{step}").exists():
    (Path(f"held-{task}-{step}")).write_text("held")
    while (HERE / f"hold-{task}-{step}").exists() and time.time() < start + 120:  # until released (or killed)
        time.sleep(0.1)
time.sleep(float(os.environ.get("AGENT_SLEEP", "0.2")))
Path(f"out-{task}-{step}.txt").write_text(f"{task} {step}\n")
conflict = HERE / f"conflict-{task}"
if conflict.exists():
    Path("shared.txt").write_text(task + "\n")
with open(f"ledger-{task}.txt", "a") as ledger:
    ledger.write(f"{task} {step} {start} {time.time()}\n")
usage = json.loads(os.environ.get("AGENT_USAGE", "{}"))
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "usage": usage} if usage else {}))
'''
IDENTITY = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}
TIMEOUT = 300.0  # a safety net only


class Repo:
    def __init__(self, tmp_path: Path, steps: tuple[str, ...] = ("s1", "s2", "s3"),
                 pause: str | tuple[str, ...] = "") -> None:
        self.root, self.dir = tmp_path / "proj", tmp_path / "harness"
        self.root.mkdir(parents=True)
        self.dir.mkdir(parents=True)
        (self.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if k not in IDENTITY and k != "ANTHROPIC_API_KEY"}
        self.env.update({"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", "PYTHONDONTWRITEBYTECODE": "1"})
        self.git("init", "-q", "-b", "main")
        for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
            self.git("config", key, value)
        assert self.specd("init").returncode == 0
        paused = pause if isinstance(pause, tuple) else (pause,)
        steps_json = [{"name": s, "workflow": "work.md", **({"pause_in_semi_auto": True} if s in paused else {})}
                      for s in steps]
        self.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "pipelines": {"main": steps_json}}))
        self.write(".specd/workflows/work.md", "---\ndescription: work\noutcomes: [\"done\"]\n---\n\n# work\n")
        self.write("README.md", "# mine\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")
        self.steps = steps
        self.ref_prefix = ""  # where the task branches are read: here, or origin/ (fetched from a shared remote)
        self.ledger_trees: Callable[[], list[Path]] = self.worktrees

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.root, capture_output=True, text=True, env=self.env,
                              check=False)
        assert done.returncode == 0, f"git {args}: {done.stderr}"
        return done.stdout

    def specd_argv(self) -> list[str]:
        return [sys.executable, "-m", "specd"]

    def specd(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", *args], cwd=self.root, env={**self.env, **(env or {})},
                          timeout=TIMEOUT)

    def new(self, task: str, *after: str) -> None:
        assert self.specd("new", task).returncode == 0
        if after:
            config = self.root / ".specd" / "tasks" / task / "config.json"
            data = json.loads(config.read_text())
            config.write_text(json.dumps({**data, "depends_on": list(after)}))

    def agent(self) -> str:
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.dir / 'agent.py'))}"

    def tree(self, task: str) -> Path:
        return self.root / ".specd" / "worktrees" / task

    def worktrees(self) -> list[Path]:
        return sorted(p for p in (self.root / ".specd" / "worktrees").iterdir() if p.is_dir())

    def ledger(self) -> list[tuple[str, str, float, float]]:
        """Every agent run, from every tree the executor ran tasks in (a line seen in two trees counts once)."""
        lines: set[str] = set()
        for tree in self.ledger_trees():
            path = tree / f"ledger-{tree.name}.txt"
            lines |= set(path.read_text().splitlines() if path.exists() else [])
        rows = []
        for line in sorted(lines):
            task, step, start, end = line.split()
            rows.append((task, step, float(start), float(end)))
        return rows

    def has(self, task: str, path: str) -> bool:
        """Whether the tip of the task's branch holds ``path``."""
        ref = f"{self.ref_prefix}specd/{task}:{path}"
        return subprocess.run(["git", "cat-file", "-e", ref], cwd=self.root, check=False).returncode == 0

    def branch_commits(self, task: str) -> list[tuple[str, list[str]]]:
        """Commits on specd/<task> not on main and not merges: (subject, files)."""
        out = self.git("log", "--no-merges", "--format=%x00%s", "--name-only", "--no-renames",
                       f"main..{self.ref_prefix}specd/{task}")
        found = []
        for block in out.split("\0")[1:]:
            subject, *files = [line for line in block.splitlines() if line]
            found.append((subject, files))
        return found

    def snapshot(self) -> tuple[str, str, str, str]:
        return (self.git("status", "--porcelain", "--untracked-files=all"), self.git("stash", "list"),
                self.git("rev-parse", "HEAD"), self.git("diff", "--cached"))


def assert_clean_branches(repo: Repo, tasks: list[str]) -> None:
    """One commit per finished step on each task's branch, and no commit holding another task's files."""
    for task in tasks:
        commits = repo.branch_commits(task)
        for step in repo.steps:
            done = [c for c in commits if c[0] == f"docs({task}): {step} complete"]
            assert len(done) == 1, (task, step, commits)
            assert f"out-{task}-{step}.txt" in done[0][1], done
        for subject, files in commits:
            for other in tasks:
                if other != task:
                    strays = [f for f in files
                              if f"-{other}-" in f or f"tasks/{other}/" in f or f == f"ledger-{other}.txt"]
                    assert not strays, (task, subject, strays)


class LocalExecutor:
    """The contract's view of the local executor: `specd run` as a real process."""

    name = "local"
    conflict_hint = "git -C .specd/worktrees/d merge specd/"

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def close(self) -> None:
        pass

    def approve(self, task: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.repo.specd("--project", str(self.repo.tree(task)), "approve", task, *extra)

    def merge_undone(self, task: str) -> bool:
        return self.repo.git("status", "--porcelain", cwd=self.repo.tree(task)) == ""

    def cancel_midway(self, task: str) -> None:
        """Run ``task`` to the end, start it again from s1, and cancel that run (a CANCELLED task)."""
        assert self.run(task, "--auto").returncode == 0
        tree = str(self.repo.tree(task))
        rerun = self.repo.specd("--project", tree, "rerun", task, "--from", "s1", "--auto", "--agent",
                                self.repo.agent())
        assert rerun.returncode == 0
        assert self.repo.specd("--project", tree, "cancel", task).returncode in (0, 4)

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.repo.specd("run", *args, "--agent", self.repo.agent(), env=env)

    def status(self, task: str) -> str:
        done = self.repo.specd("--project", str(self.repo.tree(task)), "status", task, "--json")
        assert done.returncode == 0, done.stderr
        data: Any = json.loads(done.stdout)
        row = data[0] if isinstance(data, list) else data
        return str(row["status"])

    def kill9_midstep(self, args: list[str], held: list[str]) -> None:
        """Start the executor, wait until every ``held`` (task-step) is in its agent, then SIGKILL it."""
        for name in held:
            (self.repo.dir / f"hold-{name}").write_text("")
        proc = subprocess.Popen([sys.executable, "-m", "specd", "run", *args, "--agent", self.repo.agent()],
                                cwd=self.repo.root, env=self.repo.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        while not all((self.repo.tree(n.split("-")[0]) / f"held-{n}").exists() for n in held):
            assert proc.poll() is None, "the executor ended before the held steps started"
            assert time.monotonic() < deadline, "the held steps never started"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for name in held:
            (self.repo.dir / f"hold-{name}").unlink()
