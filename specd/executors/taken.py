"""Which process has a task of `specd run`: a lock per task, taken before the run touches the task's tree and held
until its child ends.

A task's own lock (``state.lock.TaskLock``) is its child's: `specd continue` takes it once the tree is there. Before
that, the run makes the tree (`git worktree add`, the checkout, its needs merged, its folder copied in) and starts
the child. Two runs at once in one repository (`specd run --all` in two terminals) did that both for one task: one
reset a worktree the other had just made or was running in, git refused the other half-way ("index.lock: File
exists"), and the child that lost the race for the task's lock was reported FAILED. So a run takes the task here
first (a flock in the main tree, ``.specd/homes/<task>.lock``, git-ignored, freed by the kernel when its process
dies), then looks whether a process holds the task's own lock (a `specd continue`, an answer being saved); only a
task it has is made, merged, reset or run. A task another process has is left to that process.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.errors import SpecdError
from specd.state import atomic
from specd.state.lock import TaskLock, flocked, pid_alive, read_owner
from specd.tasks import home
from specd.tasks.locate import locate
from specd.tasks.project import Project
from specd.tasks.task import existing_task

PATIENCE = 0.1  # seconds a claim waits for a lock another process has, at most


@dataclass(frozen=True)
class Holder:
    """The process that has the task: another `specd run` (``run``), or one holding the task's own lock."""

    pid: int | None
    run: bool

    def text(self) -> str:
        who = f"pid {self.pid}" if self.pid else "another process"
        what = "another specd run or specd ui" if self.run else "a specd continue, or an answer being saved"
        return f"{who} ({what})"


class Hold:
    """This process has the task until ``release``."""

    def __init__(self, lock: Any, owner: Path) -> None:
        self._lock, self._owner = lock, owner

    def release(self) -> None:
        with contextlib.suppress(OSError):  # removed first: a lock just freed names no one
            self._owner.unlink(missing_ok=True)
        self._lock.release()


def claim(project: Project, task: str) -> Hold | Holder:
    """This process's claim on ``task`` against every other run; the task's own lock is not looked at."""
    from filelock import FileLock, Timeout  # here, as in state/lock.py: only what takes a lock pays for it

    path = _path(project, task)
    # thread_local off: the executor's thread takes it, and a place thread must never see it as its own. Not
    # refused at once: ``holder``'s look holds the lock for a moment too.
    lock = FileLock(str(path), timeout=PATIENCE, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        return _claimant(path)
    owner = _owner_path(path)
    try:
        atomic.write_json(owner, {"pid": os.getpid(), "host": os.uname().nodename}, durable=False)
    except BaseException:
        lock.release()
        raise
    return Hold(lock, owner)


def take(project: Project, task: str) -> Hold | Holder:
    """``claim``, and no process holding the task's own lock: the caller may make the task's tree and run it."""
    found = claim(project, task)
    if isinstance(found, Holder):
        return found
    other = _own_holder(project, task)
    if other is not None:
        found.release()
        return other
    return found


def holder(project: Project, task: str) -> Holder | None:
    """Who has ``task`` now (None: no one), only looking: no lock taken, no file made."""
    path = _path(project, task, make=False)
    if flocked(path):  # the lock itself: its owner file is written just after it is taken
        return _claimant(path)
    return _own_holder(project, task)


def _own_holder(project: Project, task: str) -> Holder | None:
    try:
        folder = existing_task(locate(project, task), task)
    except SpecdError:
        return None  # where it lives, or its files, are broken: placing it says so, with the fix
    lock = TaskLock(folder, task)
    if not lock.is_held():
        return None
    owner = read_owner(lock.owner_path) or {}
    pid = owner.get("pid")
    return Holder(pid if isinstance(pid, int) else None, run=False)


def _claimant(path: Path) -> Holder:
    owner = read_owner(_owner_path(path)) or {}
    pid = owner.get("pid")
    alive = isinstance(pid, int) and (owner.get("host") != os.uname().nodename or pid_alive(pid))
    return Holder(pid if alive and isinstance(pid, int) else None, run=True)  # no owner yet: being written


def _path(project: Project, task: str, *, make: bool = True) -> Path:
    main = home.main_of(project)
    return (home.folder(main) if make else main.specd_dir / home.FOLDER) / f"{task}.lock"


def _owner_path(path: Path) -> Path:
    return path.with_name(path.name + ".owner")
