"""What a local run does about a task another process has (another `specd run`, `specd ui`, a `specd continue`).

The run takes each task (``taken.take``) before anything touches its tree. One another process has is left to it,
its tree untouched; the run looks again now and then, and once that process lets the task go it reports how the
task ended there, or goes on with it when it was let go unfinished (``GOES_ON``). The executor (``local``) mixes
this in: these are its methods, kept apart because they answer one question.
"""

from __future__ import annotations

import time
from typing import Any

from specd.errors import SpecdError
from specd.executors import held, taken
from specd.executors.results import BROKEN, Result, current_status, tree_of
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.status import FINAL
from specd.tasks.task import existing_task

GOES_ON = ("NOT_STARTED", "IN_PROGRESS", "ABORTED")  # a task let go of in these is run here; else it ended there


class Sharing:
    """The executor's state these methods read and change (set by ``LocalExecutor.__init__``)."""

    project: Project
    listener: Any
    results: dict[str, Result]
    started: set[str]
    here: set[str]
    holds: dict[str, taken.Hold]
    elsewhere: dict[str, taken.Holder]
    looked_away: float
    stopping: bool

    def _serving(self) -> bool:
        raise NotImplementedError

    def _broken(self, task: str, reason: str, status: dict[str, str], **said: Any) -> None:
        raise NotImplementedError

    def _ended(self, task: str, state: str, reason: str, status: dict[str, str], **result: Any) -> None:
        raise NotImplementedError

    def _take(self, task: str, status: dict[str, str]) -> bool:
        """Have ``task`` before anything touches its tree; False when another process has it (left to that one)."""
        found = taken.take(self.project, task)
        if isinstance(found, taken.Holder):
            self._leave(task, found, status)
            return False
        broken: dict[str, str] = {}
        now = current_status(self.project, task, broken)  # another process may have run it since it was read
        if now in FINAL or now == BROKEN:
            found.release()
            if now == BROKEN:
                self._broken(task, broken[task], status)
            else:  # what ran it has let go: who it was is not known any more
                self._ended(task, now, "ended meanwhile in another process", status, elsewhere=True)
            return False
        self.holds[task] = found
        return True

    def _leave(self, task: str, other: taken.Holder, status: dict[str, str]) -> None:
        self.elsewhere[task] = other
        self.started.discard(task)  # not this run's to land
        self.here.discard(task)
        reason = f"runs in {other.text()}; left to it"
        self.results[task] = Result(task, status[task], reason, elsewhere=True, run_by=other.pid)  # if it stops first
        self.listener(task, {"kind": "task_elsewhere", "pid": other.pid, "reason": reason})

    def _away(self) -> bool:
        """Tasks another process has, that this run waits for (not once it is stopping)."""
        return bool(self.elsewhere) and not self.stopping

    def _let_go(self, status: dict[str, str]) -> list[str]:
        """The tasks another process has let go of and that go on here; the others are reported as they ended."""
        back: list[str] = []
        if time.monotonic() - self.looked_away < held.POLL:  # once per event otherwise
            return back
        self.looked_away = time.monotonic()
        for task, other in list(self.elsewhere.items()):
            if self.stopping or taken.holder(self.project, task) is not None:
                continue
            del self.elsewhere[task]
            broken: dict[str, str] = {}
            now = status[task] = current_status(self.project, task, broken)
            if now == BROKEN:
                self._broken(task, broken[task], status)
            elif now not in GOES_ON:
                why = "" if now == "COMPLETE" else self._reason(task)
                self._ended(task, now, f"run by {other.text()}" + (f": {why}" if why else ""), status,
                            elsewhere=True, run_by=other.pid)
            elif not self._serving():  # `specd ui` starts only what is answered or asked for: its look finds it
                self.listener(task, {"kind": "notice", "message": f"{other.text()} let it go ({now}): it goes on "
                                                                  "in this run"})
                back.append(task)
        return back

    def _reason(self, task: str) -> str:
        """Why the task's saved run stopped where it did ("" when that cannot be read)."""
        try:
            state = StateStore(existing_task(tree_of(self.project, task), task), task).load(with_history=False)
        except (SpecdError, OSError):
            return ""
        return state.reason if state is not None else ""

    def _release(self, task: str) -> None:
        hold = self.holds.pop(task, None)
        if hold is not None:
            hold.release()
