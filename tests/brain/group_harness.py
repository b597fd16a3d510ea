"""A project with a `parallel` group of three read-only reviewers, driven through the real CLI.

The reviewer (a command agent, written outside the project so it can keep notes where a read-only step may
write) records its own start and end time, waits until every member it expects has started (a barrier, so
the overlap is certain, with a generous safety timeout), tries to write in the task folder and in the
project, and reports the outcome ``cues.json`` gives its step through $SPECD_RESULT. A step named in
``hold.json`` waits there until the test kills specd; one given an ``after`` member waits until specd recorded
that member's row. Any other step (revise) just reports done.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from brain_harness import Harness

REVIEWER = r'''
import json, os, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
step, kind = os.environ["SPECD_STEP"], os.environ["SPECD_KIND"]
prompt = sys.stdin.read()
cues = json.loads((HERE / "cues.json").read_text())
note = {"start": time.time(), "kind": kind, "prompt": prompt}
with open(HERE / "calls.txt", "a") as handle:
    handle.write(step + "\n")
if step in cues.get("members", []):
    (HERE / f"started-{step}").write_text("x")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all((HERE / f"started-{m}").exists() for m in cues["wait_for"]):
        time.sleep(0.02)
    for name, target in (("task", Path(os.environ["SPECD_TASK_DIR"]) / f"by-{step}.txt"),
                         ("root", Path.cwd() / f"by-{step}.txt")):
        try:
            target.write_text("written by a read-only step")
            note["wrote_" + name] = True
        except OSError as exc:
            note["wrote_" + name] = False
            note["error_" + name] = exc.strerror
after = cues.get("after", {}).get(step)  # wait until specd recorded that member's row (it had ended)
history = Path(os.environ["SPECD_TASK_DIR"]) / ".pipeline-state.history.jsonl"
deadline = time.monotonic() + 60
while after and time.monotonic() < deadline:
    rows = [json.loads(line) for line in history.read_text().splitlines() if line.strip()] if history.exists() else []
    if any(line.get("row", {}).get("step") == after for line in rows):
        break
    time.sleep(0.05)
hold = json.loads((HERE / "hold.json").read_text()) if (HERE / "hold.json").exists() else []
if step in hold:
    (HERE / f"held-{step}").write_text("x")
    time.sleep(120)
if cues.get("fail") == step:
    sys.exit(3)
note["end"] = time.time()
(HERE / f"note-{step}.json").write_text(json.dumps(note))
outcome = cues.get("outcomes", {}).get(step, "done")
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps(
    {"outcome": outcome, "summary": f"{step} says {outcome}", "usage": {"cost_usd": 0.01}}))
'''

MEMBERS = ("security", "style", "tests")


class Group:
    """The harness's project with reviews (any-revise) → revise, and the reviewer above."""

    def __init__(self, tmp_path: Path, combine: Any = "any-revise") -> None:
        self.h = Harness(tmp_path)
        self.marks = tmp_path / "marks"  # outside the project: the one place a read-only member may write
        self.marks.mkdir()
        self.agent = self.marks / "reviewer.py"
        self.agent.write_text(REVIEWER, encoding="utf-8")
        self.h.env["SPECD_JAIL_WRITE"] = str(self.marks)
        self.h.workflow("review.md", outcomes=("approve", "revise"), body="Review the change.")
        self.h.workflow("revise.md", body="Fix what the reviews said:\n\n{{ steps.reviews.summary }}\n")
        members = [{"name": m, "workflow": "review.md", "read_only": True} for m in MEMBERS]
        self.h.pipeline({"main": [
            {"name": "reviews", "parallel": members, "combine": combine,
             "outcomes": {"revise": "revise", "approve": "end"}},
            {"name": "revise", "workflow": "revise.md"},
        ]})
        self.cues(outcomes={})
        self.h.new("t")

    def cues(self, *, outcomes: dict[str, str], wait_for: tuple[str, ...] = MEMBERS, fail: str = "",
             after: dict[str, str] | None = None) -> None:
        (self.marks / "cues.json").write_text(json.dumps({"members": list(MEMBERS), "wait_for": list(wait_for),
                                                          "outcomes": outcomes, "fail": fail, "after": after or {}}))
        for marker in self.marks.glob("started-*"):
            marker.unlink()

    def spec(self) -> str:
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.agent))}"

    def cont(self) -> Any:
        return self.h.specd("continue", "t", "--auto", "--agent", self.spec())

    def note(self, step: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.marks / f"note-{step}.json").read_text(encoding="utf-8"))
        return data

    def calls(self) -> list[str]:
        path = self.marks / "calls.txt"
        return path.read_text(encoding="utf-8").split() if path.exists() else []

    def rows(self, **match: Any) -> list[dict[str, Any]]:
        history: list[dict[str, Any]] = self.h.status("t")["history"]
        return [row for row in history if all(row.get(k) == v for k, v in match.items())]

    def start(self) -> Any:
        import subprocess

        proc = subprocess.Popen(self.h.argv("continue", "t", "--auto", "--agent", self.spec()),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.h.env, cwd=self.h.root, start_new_session=True)
        self.h.children.append(proc)
        return proc


def environ_has_bwrap() -> bool:
    from specd.system import jail

    return jail.active() and not os.environ.get("SPECD_NO_BWRAP")
