"""One working tree, several specd runs: steps take turns, and specd's own output is never a step's work.

Runs of different tasks in one tree cannot tell whose change a file is while two agents write at
once, so a step holds the tree lock from its pre-dispatch save to its commit, hooks included. The
lock lives in the tree's own git dir (``git rev-parse --git-dir``): worktrees share the common dir
but not their trees, so each tree gets its own turns. It is flock-based, so a killed holder frees it.
A gate wait holds nothing: the lock is taken after the gate is answered.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from specd.state import atomic

LOCK = "specd-tree.lock"


class TreeLock:
    def __init__(self, git_dir: Path, task: str, say: Callable[[str], None]) -> None:
        self.path, self.owner = git_dir / LOCK, git_dir / f"{LOCK}.owner"
        self.task, self.say = task, say
        self._lock = FileLock(str(self.path), thread_local=False)
        self._held = False

    def hold(self) -> None:
        """Take the tree for one step; waits (saying once who has it) while another run's step holds it."""
        if self._held:
            return
        try:
            self._lock.acquire(timeout=0)
        except TimeoutError:  # filelock.Timeout is a TimeoutError
            self.say(f"waiting for the working tree: {self._holder()} is running a step in it; "
                     "steps of tasks sharing a tree take turns, so each commit holds only its own step's work")
            self._lock.acquire(poll_interval=0.05)  # no deadline: the other step may run for hours; Ctrl-C stops
        self._held = True
        with contextlib.suppress(OSError):
            atomic.write_json(self.owner, {"task": self.task, "pid": os.getpid()}, durable=False)  # who holds it

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        self.owner.unlink(missing_ok=True)  # before the release: the next holder writes its own
        self._lock.release()

    def _holder(self) -> str:
        try:
            data = json.loads(self.owner.read_text(encoding="utf-8"))
            return f"task {data['task']!r} (pid {int(data['pid'])})"
        except (OSError, ValueError, RecursionError, KeyError, TypeError):
            return "another specd run"


def own_output(top: Path) -> set[str]:
    """specd's stdout and stderr, when redirected to files inside the tree (`2>e1.txt`): git paths that
    no step ever made. psutil names this process's open files, on Linux and macOS alike."""
    import psutil

    found: set[str] = set()
    root = top.resolve()
    try:
        files = psutil.Process().open_files()
    except psutil.Error:
        return found  # nothing is known, so nothing is left out
    for file in files:
        target = Path(file.path)
        if file.fd in (1, 2) and target.is_absolute() and target.is_file():
            with contextlib.suppress(ValueError):
                found.add(target.resolve().relative_to(root).as_posix())
    return found
