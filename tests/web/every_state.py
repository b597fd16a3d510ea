"""A project with a task in every state the tasks page tells apart, for the "needs you" page's tests.

done (COMPLETE), waits (at the gate before s2), thrice (failed the same way three times: held for a person),
broken (failed once: BLOCKED), busy (IN_PROGRESS: its agent held in s1 by a file, a real `specd run`),
dropped (CANCELLED), and a graph: child needs done, grandchild needs child and waits. A task whose folder name
is markup (``<script>``, which no `specd new` would make) needs done too: every page must show it as text.
The pipeline's own agent and mode are the harness agent's and semi-auto: what the control plane runs with.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from web_harness import SECRET_NAME, Site

FAILING = "cmd:echo the build is broken >&2; exit 1"
ATTACK = "<script>alert(1)<img src=x onerror=alert(2)>"
DEADLINE = 120.0  # a safety net for the held run to reach its agent


class EveryState(Site):
    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.env.pop(SECRET_NAME)  # no secret in the agent's notes: runs stop only where these tests stop them
        self.busy: subprocess.Popen[str] | None = None
        for task in ("done", "waits", "thrice", "broken", "busy", "dropped"):
            self.new(task)
        self.new("child", "done")
        self.new("grandchild", "child", "waits")
        self.run_to_end("done")
        self.run_to_gate("waits")
        for _ in range(3):
            failed = self.specd("continue", "thrice", "--auto", "--agent", FAILING)
        assert failed.returncode == 3, failed.stdout + failed.stderr
        failed = self.specd("continue", "broken", "--auto", "--agent", FAILING)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert self.specd("cancel", "dropped").returncode == 0
        # What the control plane (`specd ui`) starts an answered task with: the pipeline's own agent and mode.
        pipeline = self.root / ".specd" / "pipeline.json"
        data = json.loads(pipeline.read_text(encoding="utf-8"))
        data["mode"] = "semi-auto"
        data["agent"] = {**data["agent"], "backend": "command", "command": self.agent().removeprefix("cmd:")}
        pipeline.write_text(json.dumps(data), encoding="utf-8")
        self.git("commit", "-q", "-am", "the pipeline's agent and mode")

    def add_attack(self) -> None:
        """The folder named with markup, added last: `specd run` and the control plane refuse to plan with it
        there (its name is no task name), so it comes once they have run what the tests need."""
        tasks = self.root / ".specd" / "tasks"
        shutil.copytree(tasks / "child", tasks / ATTACK)

    def start_busy(self) -> None:
        """busy's agent waits in s1 until ``release_busy``: the task is IN_PROGRESS, with a live run. `specd run`
        runs it in a worktree of its own, so the main tree's step lock stays free for what the page answers."""
        (self.dir / "hold-busy").write_text("")
        self.busy = subprocess.Popen([sys.executable, "-m", "specd", "run", "busy", "--auto", "--agent",
                                      self.agent()], cwd=self.root, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + DEADLINE
        while not (self.tree("busy") / "held-busy-s1").exists():
            assert self.busy.poll() is None, self.busy.communicate()
            assert time.monotonic() < deadline, "busy's agent never reached s1"
            time.sleep(0.1)

    def release_busy(self) -> None:
        (self.dir / "hold-busy").unlink(missing_ok=True)
        if self.busy is not None:
            self.busy.communicate(timeout=DEADLINE)

    def state(self, task: str) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.root / ".specd" / "tasks" / task / ".pipeline-state.json")
                                             .read_text(encoding="utf-8"))
        return data
