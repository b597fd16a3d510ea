"""Before `specd run` starts anything: what a killed run left of each task is stopped, and finished work committed.

A `specd continue` does this for its own task when it takes the task's lock. A run of many tasks must do it for
all of them first: its own git calls (a worktree made, a need merged) and the first tasks it starts would
otherwise run beside what a killed run left of the others (an agent's background process, a `git commit`
nothing waits for), and a task whose state was saved COMPLETE just before the kill, its last commit not made,
would never be committed, since a finished task is not started again.

A task was left by a killed run exactly when its lock's owner file is still there (a run that ends removes it):
only those are touched. Taking the lock stops the leftovers (``state.lock``); a COMPLETE one is then committed
as `specd continue` would (``git.commit_finished``). A task whose lock a live run holds is that run's business,
and so is one another `specd run` has (``taken``): it may be starting that task's child this very moment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from specd import git
from specd.errors import LockHeld, SpecdError
from specd.events import Event, EventBus
from specd.executors import taken
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.tasks.locate import locate
from specd.tasks.project import Project

Listener = Callable[[str, dict[str, Any]], None]


def settle(project: Project, tasks: Iterable[str], listener: Listener) -> None:
    """Every task's leftovers stopped first, then the finished ones committed: a commit for one task never runs
    beside what a killed run left of another. A finished task's lock is held from its stop to its commit, so its
    owner file (this run's, now) says to the run after a kill in between that the commit is still to be made."""
    finished: list[tuple[Any, str, Any]] = []
    with contextlib.ExitStack() as held:
        for task in tasks:
            found = _stop(project, task, listener)
            if found is not None:
                held.callback(found[0].release)  # released when this ends, after the commits
                held.push(found[1])
                finished.append(found[2:])
        for tree, task, task_dir in finished:
            events = EventBus(_relay(task, listener))
            try:
                git.commit_finished(tree, task, task_dir, events)
            except (SpecdError, OSError) as exc:
                events.emit("warning", message=f"{task}: {exc}")


def _stop(project: Project, task: str, listener: Listener) -> tuple[taken.Hold, TaskLock, Any, str, Any] | None:
    """Stop what a killed run left of ``task`` (taking its lock does); when its state was saved COMPLETE, so its
    last commit is still to be made: this run's claim and the task's lock, still held, and its tree, name and
    folder."""
    try:
        tree = locate(project, task)
    except SpecdError:
        return None  # where it lives is broken: the run reports that task with its fix
    task_dir = tree.tasks_dir / task
    lock = TaskLock(task_dir, task)
    if not lock.owner_path.is_file():
        return None
    claim = taken.claim(project, task)
    if isinstance(claim, taken.Holder):
        return None  # another run has it
    found = None
    try:
        found = _stopped(tree, task, task_dir, lock, listener)
    finally:
        if found is None:
            claim.release()
    return None if found is None else (claim, *found)


def _stopped(tree: Project, task: str, task_dir: Any, lock: TaskLock,
             listener: Listener) -> tuple[TaskLock, Any, str, Any] | None:
    """``_stop`` once this run has the task."""
    events = EventBus(_relay(task, listener))
    try:
        lock.__enter__()
    except LockHeld:
        return None  # a live run has it
    except (SpecdError, OSError) as exc:  # its files: reported again, with the fix, when the run reaches it
        events.emit("warning", message=f"{task}: {exc}")
        return None
    try:
        if lock.stopped:
            events.emit("notice", message=f"stopped {len(lock.stopped)} process(es) left running by a "
                                          f"killed run of {task} (pids {', '.join(map(str, lock.stopped))})")
        state = StateStore(task_dir, task).load(with_history=False)
    except (SpecdError, OSError) as exc:
        lock.__exit__(None, None, None)
        events.emit("warning", message=f"{task}: {exc}")
        return None
    if state is not None and state.status == "COMPLETE":
        return lock, tree, task, task_dir  # held: released once committed
    lock.__exit__(None, None, None)
    return None


def _relay(task: str, listener: Listener) -> Callable[[Event], None]:
    return lambda event: listener(task, {"kind": event.kind, **event.data})
