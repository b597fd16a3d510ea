"""Nothing a child started outlives the step: the fallback half of "no child outlives specd".

Under bubblewrap the PID namespace does this by itself. Without it (or for a
hook with `sandbox: false`) a shell's `sleep 30 &` would run on after the hook
ends. So specd makes itself a child subreaper: an orphaned grandchild is
reparented to specd instead of init, which means every process the child ever
started stays a descendant of specd. When the child ends, each descendant in
its session, or carrying the run's owner marker, is killed and reaped. Only
specd's own descendants are ever signalled, so a reused pid is never someone
else's process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PROC = Path("/proc")
KILL_WAIT = 2.0  # seconds for SIGKILLed processes to be gone (the kernel needs no more)


def load_prctl() -> Callable[..., int] | None:
    """libc's prctl on Linux, else None (children.py uses it too)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_subreaper = False


def become_subreaper() -> bool:
    """Make this process the subreaper of everything it starts (once); False where the OS cannot."""
    global _subreaper
    if not _subreaper:
        prctl = load_prctl()
        _subreaper = prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def sweep(session: int, marker: bytes | None = None) -> list[int]:
    """Kill and reap specd's descendants in ``session`` (a child that led it) or carrying ``marker``
    (``SPECD_OWNER=<token>``); returns their pids."""
    if not PROC.is_dir():
        return []
    table = _table()
    me = os.getpid()
    found = [pid for pid, (_, sid, _) in table.items()
             if pid != me and _descends(pid, me, table) and (sid == session or _marked(pid, marker))]
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + KILL_WAIT
    for pid in found:
        if table[pid][0] == me:  # ours to reap; a grandchild is reaped by its own parent
            _reap(pid, deadline)
    return found


def _table() -> dict[int, tuple[int, int, str]]:
    """pid → (parent pid, session id, state) for every process we can see."""
    table: dict[int, tuple[int, int, str]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        table[int(entry.name)] = (int(fields[1]), int(fields[4]), fields[0])
    return table


def _descends(pid: int, ancestor: int, table: dict[int, tuple[int, int, str]]) -> bool:
    seen: set[int] = set()
    while pid in table and pid not in seen:
        seen.add(pid)
        pid = table[pid][0]
        if pid == ancestor:
            return True
    return False


def _marked(pid: int, marker: bytes | None) -> bool:
    if marker is None:
        return False
    try:
        return marker in (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _reap(pid: int, deadline: float) -> None:
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return  # already reaped (by a Popen that owned it)
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.01)
