"""No child outlives specd: every process specd starts dies with it, and a resumed run stops leftovers.

Two layers, because neither is enough alone:

- ``die_with_parent`` (a ``preexec_fn``) asks the kernel to SIGKILL the child the moment specd dies,
  SIGKILL included (Linux ``PR_SET_PDEATHSIG``). It covers the direct child only: a grandchild that a
  shell forks does not inherit it.
- So every child also carries ``SPECD_OWNER=<token>`` in its environment (inherited by its own
  children), and the running child's process group is recorded in the lock's owner file. The next run
  that takes the lock stops whatever is left of that group, and any stray carrying the old token,
  before the interrupted step runs again. The token keeps us from signalling an unrelated process
  that happens to reuse a recorded pid.

While specd lives, a child's leftovers (a hook's `sleep 30 &`) are killed the moment the child ends
(``specd.system.reaper``); under bubblewrap the jail's PID namespace also takes them down with specd.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from specd.system import reaper

OWNER_ENV = "SPECD_OWNER"
PR_SET_PDEATHSIG = 1
STOP_GRACE = 5.0  # seconds a leftover gets between TERM and KILL
PROC = Path("/proc")


class Tracker(Protocol):
    """Who wants to know which process groups are running now (the task lock's owner file)."""

    token: str

    def child_started(self, pgid: int) -> None: ...

    def child_ended(self, pgid: int) -> None: ...


_tracker: Tracker | None = None


@contextlib.contextmanager
def tracked_by(tracker: Tracker) -> Iterator[None]:
    """While the block runs, every child started through ``specd.agents.proc`` is reported to ``tracker``."""
    global _tracker
    previous, _tracker = _tracker, tracker
    try:
        yield
    finally:
        _tracker = previous


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus the owner marker of the run holding the lock (if any)."""
    reaper.become_subreaper()  # before the child exists, so none of its orphans can slip past specd
    marked = dict(env)
    if _tracker is not None:
        marked[OWNER_ENV] = _tracker.token
    return marked


def started(pgid: int) -> None:
    if _tracker is not None:
        _tracker.child_started(pgid)


def ended(pgid: int) -> None:
    """The child that led ``pgid`` is gone: kill what it left behind, then forget the group."""
    marker = f"{OWNER_ENV}={_tracker.token}".encode() if _tracker is not None else None
    reaper.sweep(pgid, marker)
    if _tracker is not None:
        _tracker.child_ended(pgid)


# Resolved once in the parent: between fork and exec the child must not load libraries.
_PRCTL = reaper.load_prctl()


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child die with this process; None where the OS has no such thing.

    Linux sends the signal when the *thread* that started the child ends, so start children from a
    thread that lives as long as they should (specd starts them from its main thread).
    """
    if _PRCTL is None:
        return None
    prctl, parent = _PRCTL, os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # If specd died before prctl took effect, the signal will never come: go now.
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def stop_leftovers(owner: Mapping[str, object]) -> list[int]:
    """Stop what a dead run left behind; returns the pids that were still running."""
    token = owner.get("mark")
    if not isinstance(token, str) or not token or not PROC.is_dir():
        return []  # without a token (or /proc) nothing proves a process is ours: leave it alone
    groups = {g for g in owner.get("children") or [] if isinstance(g, int) and g > 1}  # type: ignore[attr-defined]
    found = _ours(token, groups)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [pid for pid in found if _alive(pid)]
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + STOP_GRACE
        while any(_alive(pid) for pid in alive) and time.monotonic() < deadline:
            time.sleep(0.05)
    return found


def _ours(token: str, groups: set[int]) -> list[int]:
    """Processes in a recorded group that carry the token, plus strays elsewhere that carry it."""
    marker = f"{OWNER_ENV}={token}".encode()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone already, or not ours to read
        if marker in environ and _alive(int(entry.name)):
            found.append(int(entry.name))
    # A recorded group member without the token (it cleared its env) is still stopped when a
    # member of the same group proves the group is ours.
    proven = {_pgid(pid) for pid in found} & groups
    found += [pid for pid in _members(proven) if pid not in found]
    return found


def _stat(pid: int) -> list[str] | None:
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has already stopped


def _pgid(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[2]) if fields else -1


def _members(groups: set[int]) -> list[int]:
    if not groups:
        return []
    return [int(e.name) for e in PROC.iterdir() if e.name.isdigit() and _pgid(int(e.name)) in groups
            and _alive(int(e.name))]
