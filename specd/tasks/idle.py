"""What a task that no process runs is: the one test the control plane, `specd status` and the page share.

A saved status of IN_PROGRESS says only that the run has not ended; whether something runs it now is the task
lock's to say. A task IN_PROGRESS that no process holds is idle, and one of two things:

- answered: a person decided (approve, reject, skip, retry, rerun; ``RunState.answered``) and no run has
  taken the decision up yet. The control plane starts it; the page offers Continue.
- stopped: a run that ended without saving its end (killed, a lost machine). Nothing starts it by itself;
  the page offers Run, `specd continue` resumes it. (One exception: a run a control plane started, which died
  with its plane, is taken up by the next plane: ``executors.plane.take_up``.)
"""

from __future__ import annotations

from pathlib import Path

from specd.state.lock import TaskLock
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.tasks.project import in_order

ANSWERED, STOPPED = "answered", "stopped"
SHOWN = {ANSWERED: "ANSWERED", STOPPED: "STOPPED"}  # how the page and its filters name an idle task


def answered(state: RunState) -> bool:
    """A decision waits to be acted on (whether or not a process is running the task)."""
    return state.status == "IN_PROGRESS" and bool(state.answered)


def idle(state: RunState, running: bool) -> str | None:
    """ANSWERED or STOPPED for an IN_PROGRESS task no process runs; None for anything else."""
    return idle_of(state.status, state.answered, running)


def idle_of(status: str, decided: str, running: bool) -> str | None:
    """``idle`` from the saved fields alone (the page's live badge reads them from the raw file)."""
    if running or status != "IN_PROGRESS":
        return None
    return ANSWERED if decided else STOPPED


# Waiting tasks first, on the page and in the terminal alike: what needs a person, then what went wrong, then
# what runs or is about to, then the rest.
ATTENTION = {"WAITING_FOR_HUMAN": 0, "BLOCKED": 1, "FAILED": 2, "IN_PROGRESS": 3, "ANSWERED": 3, "ABORTED": 4,
             "STOPPED": 4, "ERROR": 5, "NOT_STARTED": 6, "COMPLETE": 7, "CANCELLED": 8}


def attention(status: str, task: str) -> tuple[int, tuple[tuple[str | int, ...], str]]:
    """The sort key of a listing: by ATTENTION, then by name (t2 before t10)."""
    return ATTENTION.get(status, 9), in_order(task)


def shown(status: str, idle_as: str | None) -> str:
    """The status a page shows: never IN_PROGRESS for a task nothing runs."""
    return SHOWN.get(idle_as or "", status)


def goes_on(folder: Path, task: str, *, held_too: bool = False) -> bool:
    """The task in ``folder`` is answered and no process holds it: the control plane may start it now.
    ``held_too``: answered, whether or not a process holds it."""
    state = StateStore(folder, task).load(with_history=False)
    return state is not None and answered(state) and (held_too or not TaskLock(folder, task).is_held())
