"""Running one case of a pipeline test: the real loop, a scripted agent, a scratch project.

The case's replies become a script for specd's own scripted agent; a task is made in a scratch copy of
the project and run through ``run_task``, the seam every executor uses, so what is tested is the loop a
real run takes. The path it took is read back from the run's history and set against the case's.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import yaml

from specd.engine.control import answer
from specd.engine.seam import Stopped, run_task
from specd.errors import SpecdError
from specd.events import EventBus
from specd.git import identity
from specd.human import NoHuman
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import create_task
from specd.testing.cases import Case, Place
from specd.testing.scratch import scratch_project


@dataclass(frozen=True)
class Verdict:
    case: Case
    actual: list[Place] = field(default_factory=list)
    status: str = ""
    reason: str = ""  # why the run stopped, in the run state's words
    failure: str | None = None  # where the run differs from the case; None: it passed

    @property
    def passed(self) -> bool:
        return self.failure is None

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case.name, "file": str(self.case.source), "passed": self.passed,
                "failure": self.failure, "status": self.status, "reason": self.reason,
                "path": [place.shown() for place in self.actual]}


def run_case(project: Project, case: Case) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="specd-test-") as tmp:
        scratch = scratch_project(project, Path(tmp) / "project")
        script = Path(tmp) / "agent.yaml"
        script.write_text(yaml.safe_dump({"entries": agent_script(case)}, sort_keys=False), encoding="utf-8")
        task = task_name(case.name)
        try:
            folder = create_task(scratch, task, case.description)
            for relpath, text in case.files.items():
                target = folder / relpath
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            stopped, holds, unused = _run(scratch, task, case, script)
        except SpecdError as exc:
            return Verdict(case, failure=f"the run could not go on: {exc.message}")
        state = StateStore(folder, task).load()
        history = state.history if state is not None else []
    # A parallel group is one place of the path, with its combined outcome; its members end in any order, so their
    # rows are not places (their outcomes are the case's replies, which decide the group's).
    actual = [Place(str(row["step"]), row.get("phase"), str(row.get("outcome")))
              for row in history if row.get("kind") == "step" and not row.get("superseded") and not row.get("group")]
    failure = compare(case, actual, stopped.status, stopped.reason, (stopped.waiting or {}).get("kind"))
    if failure is None and case.holds is not None and holds != list(case.holds):
        failure = f"the run held for {', '.join(holds) or 'nothing'}; expected {', '.join(case.holds) or 'nothing'}"
    if failure is None and unused:
        failure = f"the run never waited for the answer(s) {', '.join(unused)}"
    return Verdict(case, actual, stopped.status, stopped.reason, failure)


def _run(scratch: Project, task: str, case: Case, script: Path) -> tuple[Stopped, list[str], list[str]]:
    """Run the task; each time it waits for a person, give the case's next answer (as `specd approve`,
    `reject` or `skip` would) and run it again. Returns how it stopped, what each answered hold waited for,
    and the answers left over."""
    answers, holds = list(case.answers), list[str]()
    while True:
        stopped = run_task(scratch, task, events=EventBus(), human_for=lambda mode: NoHuman(),
                           mode_flag=case.mode, agent_spec=f"scripted:{script}")
        if stopped.status != "WAITING_FOR_HUMAN" or not answers:
            return stopped, holds, answers
        holds.append(str((stopped.waiting or {}).get("kind") or "?"))
        verb, _, note = answers.pop(0).partition(":")
        answer(scratch, task, verb.strip(), note.strip(), identity.here("cli", scratch.root))


def compare(case: Case, actual: list[Place], status: str, reason: str, waiting: str | None) -> str | None:
    """Where the run differs from the case, naming the first step that differs; None when it does not."""
    stopped = f"{status}" + (f": {reason}" if reason else "")
    for number, (want, got) in enumerate(zip_longest(case.path, actual), 1):
        if want is None and got is not None:
            return (f"step {number}: the run went on to {got.shown()}, where the case's path ends "
                    f"(the run ended {stopped})")
        if got is None and want is not None:
            return f"step {number}: expected {want.shown()}, but the run stopped before it ({stopped})"
        if want is not None and got is not None and not want.fits(got):
            later = {place.step for place in actual[number - 1:]}
            note = "" if want.step in later else f"; the run passed over {want.step!r}"
            return f"step {number}: expected {want.shown()}, got {got.shown()}{note}"
    if status != case.status:
        return f"the run ended {stopped}; expected {case.status}"
    if case.waiting and waiting != case.waiting:
        return f"the run waits for {waiting or 'nothing'}; expected it to wait for {case.waiting}"
    return None


def agent_script(case: Case) -> list[dict[str, Any]]:
    """The case's replies as entries of the scripted agent's script. Hooks pass; a step the case gives no
    reply for reports nothing (outcome done), so a case lists only the steps whose answer matters."""
    entries: list[dict[str, Any]] = [{"match": {"kind": "hook"}, "sticky": True, "summary": "hook (specd test)"}]
    for reply in case.replies:
        match: dict[str, Any] = {"kind": "step", "step": reply["step"]}
        match.update({key: reply[key] for key in ("phase", "pipeline") if key in reply})
        entry: dict[str, Any] = {"match": match, "summary": _literal(reply.get("summary", ""))}
        if "outcome" in reply:
            entry["outcome"] = reply["outcome"]
        if "output" in reply:
            entry["data"] = {"output": reply["output"]}
        if reply.get("files"):
            entry["writes"] = {f"$task_dir/{_literal(p)}": _literal(text) for p, text in reply["files"].items()}
        if "fail" in reply:
            entry["fail"] = _literal(reply["fail"])
        entries.append(entry)
    entries.append({"match": {"kind": "step"}, "sticky": True, "summary": "no reply in the case: done"})
    return entries


def task_name(case: str) -> str:
    """A task name made from the case's name (the scratch project holds only this task)."""
    return re.sub(r"[^a-z0-9._-]+", "-", case.lower()).strip("-.")[:64] or "case"


def _literal(text: str) -> str:
    """The scripted agent expands ``$task`` and friends; a case's text is meant as written."""
    return str(text).replace("$", "$$")
