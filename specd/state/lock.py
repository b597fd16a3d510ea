"""One lock per task, held for the whole run.

filelock's flock-based lock is released by the kernel when its process dies,
so a lock left by a SIGKILLed run is reclaimed without any guessing. A small
owner file beside it names the holder's pid for the refusal message.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from specd.errors import LockHeld
from specd.state.model import now


class TaskLock:
    def __init__(self, task_dir: Path, task: str) -> None:
        self.path = task_dir / ".run.lock"
        self.owner_path = task_dir / ".run.lock.owner"
        self.task = task
        self._lock = FileLock(str(self.path), timeout=0)

    def __enter__(self) -> TaskLock:
        try:
            self._lock.acquire()
        except Timeout:
            raise LockHeld(
                f"task {self.task!r} is already being run by {self.holder_text()} (lock: {self.path})",
                fix="wait for that run to finish, or stop it (Ctrl-C or `kill <pid>`) and run this again",
            ) from None
        self.owner_path.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                               "since": now()}), encoding="utf-8")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.owner_path.unlink(missing_ok=True)
        self._lock.release()

    def holder_text(self) -> str:
        owner = read_owner(self.owner_path)
        return f"pid {owner['pid']} on {owner.get('host', '?')} since {owner.get('since', '?')}" if owner \
            else "another process"

    def is_held(self) -> bool:
        """True when a live process holds the lock. Only reads: creates no file (status is read-only)."""
        owner = read_owner(self.owner_path)
        if owner is None:
            return False  # the holder writes its owner file right after taking the lock
        pid = owner.get("pid")
        if owner.get("host") == socket.gethostname() and isinstance(pid, int) and not _alive(pid):
            return False  # SIGKILLed: the kernel freed the lock, the owner file stayed behind
        return _flocked(self.path)  # alive (or elsewhere): the lock itself says, in case the pid was reused


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _flocked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)  # never O_CREAT
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def read_owner(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "pid" in data else None
