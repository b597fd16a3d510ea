"""`specd run --keep-waiting`: a task that stops on a held wait stays in the run until someone answers it.

Its child process has ended (a waiting task holds no process and no lock); the executor looks at the task's
saved state now and then. Once `specd approve/reject/skip` (or the dashboard, which calls the same functions)
has answered, the state is no longer held and the task's child is started again, resuming where it waited.
"""

from __future__ import annotations

from specd.engine.waiting import held
from specd.executors import worktrees
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import existing_task

POLL = 0.25  # seconds between looks while only waiting tasks are left


def waiting(project: Project, task: str) -> bool:
    """The task stopped on a wait only an answer moves (a gate, an escalation)."""
    return answered(project, task) is None


def answered(project: Project, task: str) -> str | None:
    """None while the task still waits (or someone else's process holds it); else its status now."""
    folder = existing_task(worktrees.task_project(project, task), task)
    if TaskLock(folder, task).is_held():  # being answered, or run by hand (`specd continue --approve`)
        return None
    state = StateStore(folder, task).load(with_history=False)
    if state is None:
        return "NOT_STARTED"
    return None if held(state) else state.status
