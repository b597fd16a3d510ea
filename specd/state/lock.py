"""One lock per task, held for the whole run.

filelock's flock-based lock is released by the kernel when its process dies,
so a lock left by a SIGKILLed run is reclaimed without any guessing. A small
owner file beside it names the holder's pid for the refusal message; it is
written once a run. The process groups of the children it is running go to a
second file, a line each as a child starts (``+pgid``) and ends (``-pgid``),
appended to a descriptor kept open (one `write` a child, where rewriting the
owner file cost a temporary file and a rename), and emptied, once past a page, when no child
runs. Whoever takes the lock next reads both first and stops what a killed run
left behind (``specd.system.children``), then sweeps the scratch files such a
kill leaves (``.tmp-*``, ``.result-*.json``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import FileLock

try:
    import fcntl
except ImportError:  # not on Windows; the probe below falls back to filelock
    fcntl = None  # type: ignore[assignment]

from specd.errors import LockHeld
from specd.state import atomic
from specd.state.model import now

CANCEL_MARK = ".cancel-requested"  # `specd cancel` leaves it for the run it stops; the next lock holder sweeps it
# The groups file: named to match the `*.lock` line of every .specd/.gitignore written so far (never committed).
GROUPS = ".run.groups.lock"
GROUPS_PAGE = 4096
SCRATCH = (".tmp-*", ".result-*.json", CANCEL_MARK)  # left by a kill mid-write or mid-step; never wanted later
HELD = "is already being run by"  # in the refusal: `specd run` tells a child that lost the lock by it


class TaskLock:
    def __init__(self, task_dir: Path, task: str) -> None:
        self.path = task_dir / ".run.lock"
        self.owner_path = task_dir / ".run.lock.owner"
        self.groups_path = task_dir / GROUPS
        self._groups_fd: int | None = None
        self._written = 0  # bytes in the groups file
        self.task = task
        self.token = os.urandom(16).hex()  # marks this holder's children (SPECD_OWNER) so no one else's are touched
        self.stopped: list[int] = []  # pids a killed run left running, stopped on taking the lock
        self.swept: list[Path] = []  # scratch files that run left behind
        self._children: list[int] = []
        self._since = now()
        self._lock: FileLock | None = None  # made on entry: `status` builds one per task only to probe it

    def __enter__(self) -> TaskLock:
        # Imported here: `status` only probes locks, and should not pay for filelock (or children's ctypes).
        from filelock import FileLock, Timeout

        from specd.system import children

        self._lock = FileLock(str(self.path), timeout=0)
        try:
            self._lock.acquire()
        except Timeout:
            raise LockHeld(
                f"task {self.task!r} {HELD} {self.holder_text()} (lock: {self.path})",
                fix="wait for that run to finish, or stop it (Ctrl-C or `kill <pid>`) and run this again",
            ) from None
        try:
            previous = read_owner(self.owner_path)
            if previous is not None and previous.get("host") == _host():
                groups = read_groups(self.groups_path) | set(_ints(previous.get("children")))  # an older specd's
                self.stopped = children.stop_leftovers({**previous, "children": sorted(groups)})
            self.swept = sweep_scratch(self.path.parent)
            self._write_owner()
            self._groups_fd = os.open(self.groups_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except BaseException:
            assert self._lock is not None
            self._lock.release()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            with contextlib.suppress(OSError):  # a read-only or full disk must not keep the lock held
                if self._groups_fd is not None:
                    os.close(self._groups_fd)
                    self._groups_fd = None
                self.groups_path.unlink(missing_ok=True)
                self.owner_path.unlink(missing_ok=True)
        finally:
            assert self._lock is not None
            self._lock.release()

    def child_started(self, pgid: int) -> None:
        self._children.append(pgid)
        self._note(f"+{pgid}\n")

    def child_ended(self, pgid: int) -> None:
        if pgid in self._children:
            self._children.remove(pgid)
            self._note(f"-{pgid}\n")

    def _note(self, line: str) -> None:
        """Append ``line`` to the groups file; emptied once it passes a page with no child running, so it never
        grows past that (and, until then, a child's start and end share a page already there: a full disk
        frees or takes nothing mid-step)."""
        if self._groups_fd is None:
            return
        self._written += len(line)
        if not self._children and self._written > GROUPS_PAGE:
            line, self._written = "", 0
        # Not fsynced: after a power cut no process it names is running, and a kill -9 loses no page. The
        # record is a backstop (children die with specd anyway): a full disk mid-step is reported by the state
        # write that follows, not here.
        with contextlib.suppress(OSError):
            if line:
                os.write(self._groups_fd, line.encode())
            else:
                os.ftruncate(self._groups_fd, 0)

    def _write_owner(self) -> None:
        # "mark", not "token": the one redaction filter masks every value kept under a *token key.
        owner = {"pid": os.getpid(), "host": _host(), "since": self._since, "mark": self.token}
        atomic.write_json(self.owner_path, owner, durable=False)  # not fsynced: see _note

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
        if owner.get("host") == _host() and isinstance(pid, int) and not pid_alive(pid):
            return False  # SIGKILLed: the kernel freed the lock, the owner file stayed behind
        return flocked(self.path)  # alive (or elsewhere): the lock itself says, in case the pid was reused


def _host() -> str:
    return os.uname().nodename  # what socket.gethostname() returns, without importing socket


def pid_alive(pid: int) -> bool:
    """True if a process with ``pid`` exists (whoever owns it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A dead process whose parent has not reaped it yet (a subreaper, say) still answers kill(pid, 0).

    psutil is imported only here, once a process with that pid exists: `specd status` with no run alive
    never loads it."""
    import psutil

    try:
        return psutil.Process(pid).status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.Error:
        return False  # gone meanwhile, or not ours to inspect: kill(pid, 0) said it exists


def flocked(path: Path) -> bool:
    """Whether a process holds a flock on ``path`` (a missing file: no one). Only looks: never creates it."""
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


def read_groups(path: Path) -> set[int]:
    """The process groups the groups file says are running (anything unreadable in it is skipped)."""
    groups: set[int] = set()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in path.read_text(encoding="utf-8").split():
            sign, number = line[:1], line[1:]
            if number.isdigit():
                (groups.add if sign == "+" else groups.discard)(int(number))
    return groups


def _ints(value: object) -> list[int]:
    return [item for item in value if type(item) is int] if isinstance(value, list) else []


def read_owner(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and "pid" in data else None


def sweep_scratch(task_dir: Path) -> list[Path]:
    """Remove scratch files under ``task_dir``; only ever called with the task's lock held."""
    import fnmatch  # noqa: PLC0415 - a run's start only

    from specd.system.ownfiles import walk  # noqa: PLC0415

    swept = []
    for folder, _, files in walk(task_dir):  # the agent may nest folders a thousand deep: no recursion
        for name in files:
            path = Path(folder) / name
            if any(fnmatch.fnmatch(name, pattern) for pattern in SCRATCH):
                with contextlib.suppress(OSError):
                    if path.is_file() and not path.is_symlink():
                        path.unlink()
                        swept.append(path)
    return swept
