"""The dashboard's buttons: the very functions the CLI verbs call, so an answer is recorded the same way.

approve, reject, skip → ``engine.control.answer`` (`specd approve/reject/skip`); cancel, retry, rerun →
``engine.control.cancel/retry/rerun``. The server is the project's control plane (`specd ui`), which starts
every answered task by itself; Run and Continue (``ASKS``) ask it to start a task that is ready (not started,
stopped) or answered.

Each is recorded as from the page, by the OS user the server runs as: the dashboard knows its visitors only by
the one access token, so the person who started it (and handed out its address) is the one it can name. An
answer sent by `specd approve --server URL` from another clone is recorded as from that clone, by the git
identity it sends (``clone``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from specd.engine import control
from specd.errors import UsageError
from specd.git.identity import login_name
from specd.state.checkpoint import Origin
from specd.tasks.project import Project

Action = Callable[[Project, str, str, str, str], str]
ASKS = ("run", "continue")  # the page asks the control plane to start the task; nothing is recorded
ANSWERS = ("approve", "reject", "skip")  # what another clone may send (`specd approve --server URL`)
MAX_BY = 200  # characters of a sender's name kept


class Plane(Protocol):
    """The control plane, as the page sees it (executors/plane.py)."""

    def ask(self, task: str) -> str: ...


def page() -> Origin:
    return Origin("page", login_name())


def clone(by: str) -> Origin:
    """An answer sent from another clone; ``by`` is the git identity it says it has (the token vouches for it)."""
    return Origin("clone", " ".join(by.split())[:MAX_BY])


def _answer(verb: str) -> Action:
    return lambda project, task, note, step, phase: control.answer(project, task, verb, note, page())


def _rerun(project: Project, task: str, note: str, step: str, phase: str) -> str:
    if not step:
        raise UsageError("rerun needs the step to start again from", fix="choose a step in the list")
    return control.rerun(project, task, step, phase or None, page(), hand_over=True)


ACTIONS: dict[str, Action] = {
    "approve": _answer("approve"),
    "reject": _answer("reject"),
    "skip": _answer("skip"),
    "cancel": lambda project, task, note, step, phase: control.cancel(project, task, page()),
    "retry": lambda project, task, note, step, phase: control.retry(project, task, page(), hand_over=True),
    "rerun": _rerun,
}


def lives_on_temporal(main: Project, task: str) -> bool:
    from specd.executors.temporal import record

    return record.on_temporal(main, task)


def signal(main: Project, task: str, verb: str, note: str, origin: Origin) -> str:
    """An answer or a cancel for a task on Temporal: a signal to its workflow, as `specd approve` sends it; this
    clone's copy of the task is never touched (it would be a second copy)."""
    if verb not in (*ANSWERS, "cancel"):
        raise UsageError(f"task {task!r} runs on Temporal, whose workers run it: {verb} is not sent there",
                         fix=f"follow it with `specd status {task}`; to run it here instead, cancel it, then "
                             f"`specd run {task} --move` brings it here with its history")
    from specd.executors.temporal.signals import answer_on_temporal

    said = answer_on_temporal(main, task, verb, note if verb != "skip" else "", {}, by=origin.by)
    if said is None:
        raise UsageError(f"task {task!r}'s workflow no longer runs, so it waits for no answer",
                         fix=f"`specd status {task}` says how it ended")
    return said


def ask(plane: Plane | None, task: str) -> str:
    if plane is None:
        raise UsageError("this server runs no control plane, so it cannot start tasks",
                         fix=f"start the dashboard with `specd ui`, or run it yourself: `specd continue {task}`")
    return plane.ask(task)


def then(verb: str, task: str, plane: bool = True, temporal: bool = False, page: bool = True) -> str:
    """What happens next, said after the answer (``temporal``: sent to the task's workflow as a signal). Not
    ``page``: said to a terminal or a tool in another clone (the JSON API), which has no page to follow it on."""
    if verb == "cancel":
        return ""
    if temporal:
        return ("Sent to its workflow on Temporal: a worker goes on with it, and this page shows what it pushes."
                if page else f"Sent to its workflow on Temporal: a worker goes on with it; `specd status {task}` "
                             "shows what it pushes.")
    if verb in ASKS or plane:
        if not page:
            return (f"The control plane serving this address runs it now; follow it on its page, or with `specd "
                    f"status {task}` in its clone.")
        return "This page follows it as it runs." if verb in ASKS else \
            "The control plane (this server) runs it now; this page follows it."
    return f"`specd continue {task}` goes on." if page else f"`specd continue {task}` in the served clone goes on."
