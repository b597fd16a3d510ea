"""The dashboard's buttons: the very functions the CLI verbs call, so an answer is recorded the same way.

approve, reject, skip → ``engine.control.answer`` (`specd approve/reject/skip`); cancel, retry, rerun →
``engine.control.cancel/retry/rerun``. Like `specd approve`, nothing runs here: a `specd run --keep-waiting`
watching the task goes on by itself, otherwise `specd continue TASK` does.

Each is recorded as from the page, by the OS user the server runs as: the dashboard knows its visitors only by
the one access token, so the person who started it (and handed out its address) is the one it can name.
"""

from __future__ import annotations

from collections.abc import Callable

from specd.engine import control
from specd.errors import UsageError
from specd.git.identity import login_name
from specd.state.checkpoint import Origin
from specd.tasks.project import Project

Action = Callable[[Project, str, str, str, str], str]


def page() -> Origin:
    return Origin("page", login_name())


def _answer(verb: str) -> Action:
    return lambda project, task, note, step, phase: control.answer(project, task, verb, note, page())


def _rerun(project: Project, task: str, note: str, step: str, phase: str) -> str:
    if not step:
        raise UsageError("rerun needs the step to start again from", fix="choose a step in the list")
    return control.rerun(project, task, step, phase or None, page())


ACTIONS: dict[str, Action] = {
    "approve": _answer("approve"),
    "reject": _answer("reject"),
    "skip": _answer("skip"),
    "cancel": lambda project, task, note, step, phase: control.cancel(project, task, page()),
    "retry": lambda project, task, note, step, phase: control.retry(project, task, page()),
    "rerun": _rerun,
}


def then(verb: str, task: str) -> str:
    """What happens next, said after the answer."""
    if verb == "cancel":
        return ""
    return (f"A `specd run --keep-waiting` that holds {task} goes on now; otherwise `specd continue {task}` "
            "does.")
