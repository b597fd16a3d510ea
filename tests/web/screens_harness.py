"""A project with a task in every state the dashboard shows, for the checks of every page on every screen.

done: COMPLETE. waits: at the gate before s2. thrice: its agent failed three times (held as a failure cluster).
blocked: failed once. stopped: cancelled at its gate. checked: s1's checks failed in
both its attempts (held). fresh: not started, needing waits (the graph). running
and live: each run by its own `specd run` in a worktree, their agents held in a step by files in the harness
folder (``hold-<task>-<step>``) until a test removes them; the agent prints as it works, so a page can show it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "executors"))

from executor_harness import Repo  # noqa: E402

DEADLINE = 120.0  # a safety net only
AGENT = r'''
import json, os, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
task, step = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"]
sys.stdin.read()
print(f"working on {task} {step}", flush=True)
if (HERE / f"fail-{task}").exists():
    print("the build broke: 3 tests failed", flush=True)
    sys.exit(1)
hold = HERE / f"hold-{task}-{step}"
if hold.exists():
    Path(f"held-{task}-{step}").write_text("held")
    print(f"{step} waits for its hold to go", flush=True)
    while hold.exists():
        time.sleep(0.1)
print(f"{step} done", flush=True)
usage = {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0125 if step == "s1" else 0.0311}
# One summary with a long unbroken run (a path an agent wrote): its column may break it, no other column shrinks.
summary = f"{step} of {task}" + (" wrote src/" + "very_long_module_name_" * 14 if task == "done" else "")
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": summary, "usage": usage}))
'''


HIDER = ("import os, pathlib\n"
         "pathlib.Path('tests').mkdir(exist_ok=True)\n"
         "pathlib.Path('tests/.gitignore').write_text('.gitignore\\nconftest.py\\n')\n"
         "pathlib.Path('tests/conftest.py').write_text('print(1)\\n')\n"
         "pathlib.Path(os.environ['SPECD_RESULT']).write_text('{\"outcome\": \"done\"}')\n")


class Screens(Repo):
    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path, steps=("s1", "s2"), pause="s2")
        (self.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        pipeline = self.root / ".specd" / "pipeline.json"
        data = json.loads(pipeline.read_text(encoding="utf-8"))
        data["pipelines"]["main"][0] |= {"checks": ['test ! -e "checks-fail-$SPECD_TASK"'], "attempts": 2}
        pipeline.write_text(json.dumps(data), encoding="utf-8")
        self.git("commit", "-q", "-am", "s1 is checked: twice, for a task whose checks are made to fail")
        self.runs: list[subprocess.Popen[str]] = []
        for task in ("done", "waits", "thrice", "blocked", "stopped", "checked", "running", "live"):
            self.new(task)
        self.new("fresh", "waits")
        self.expect(0, "continue", "done", "--auto")
        self.expect(3, "continue", "waits", "--semi-auto")
        self.expect(3, "continue", "stopped", "--semi-auto")
        self.expect(0, "cancel", "stopped")
        (self.root / "checks-fail-checked").write_text("")
        self.expect(3, "continue", "checked", "--auto")  # both rounds fail: held for a person
        for task, codes in (("blocked", (1,)), ("thrice", (1, 1, 3))):
            (self.dir / f"fail-{task}").write_text("")
            for code in codes:
                self.expect(code, "continue", task, "--auto")
        # hid: a step that hid a conftest.py from git waits for a person to look at it (the page lists it)
        (self.dir / "hider.py").write_text(HIDER, encoding="utf-8")
        self.new("hid")
        hidden = self.specd("continue", "hid", "--auto", "--agent", f"cmd:{sys.executable} {self.dir / 'hider.py'}")
        assert hidden.returncode == 3, hidden.stdout + hidden.stderr

    def expect(self, code: int, *args: str) -> None:
        agent = ("--agent", self.agent()) if args[0] == "continue" else ()
        done = self.specd(*args, *agent)
        assert done.returncode == code, f"specd {args}: {done.returncode}\n{done.stdout}{done.stderr}"

    def start(self, task: str, *held: str) -> None:
        """`specd run TASK` in the background, its agent held in each of ``held`` until released."""
        for step in held:
            (self.dir / f"hold-{task}-{step}").write_text("")
        run = subprocess.Popen([sys.executable, "-m", "specd", "run", task, "--auto", "--agent", self.agent()],
                               cwd=self.root, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.runs.append(run)
        self.until(lambda: (self.tree(task) / f"held-{task}-{held[0]}").exists(), f"{task} is held in {held[0]}")

    def release(self, task: str, step: str) -> None:
        (self.dir / f"hold-{task}-{step}").unlink()

    def until(self, check: object, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not check():  # type: ignore[operator]
            for run in self.runs:
                assert run.poll() is None, f"a run ended early: {run.communicate()}"
            assert time.monotonic() < deadline, f"never: {what}"
            time.sleep(0.1)

    def close(self) -> None:
        for hold in self.dir.glob("hold-*"):
            hold.unlink()
        for run in self.runs:
            try:
                run.communicate(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()


def axe_script() -> Path | None:
    """axe-core as CI installs it (.ci/node/ under the repository's root; in a git worktree, the main tree's)."""
    here = Path(__file__).resolve().parents[2]
    roots = [here]
    common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=here,
                            capture_output=True, text=True, check=False).stdout.strip()
    if common:
        roots.append(Path(common).parent)
    for root in roots:
        path = root / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"
        if path.is_file():
            return path
    return None


def in_ci() -> bool:
    return bool(os.environ.get("CI"))
