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

Processes are found through ``psutil`` (imported only when a run needs it), so the same code works where
there is no proc filesystem (macOS); ``protection()`` says which of these layers the machine has.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from specd.system import reaper
from specd.system.reaper import OWNER_ENV

if TYPE_CHECKING:
    from psutil import Process

PR_SET_PDEATHSIG = 1
# How a process tree is stopped, and how long each signal is given: a polite TERM, then a second one (the
# keeper, asked twice, kills its whole tree itself: a SIGKILL of the keeper would set a `setsid` grandchild free
# outside the jail), then KILL.
STOPPING = ((signal.SIGTERM, 5.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0))


class Tracker(Protocol):
    """Who wants to know which process groups are running now (the task lock's owner file)."""

    token: str

    def child_started(self, pgid: int) -> None: ...

    def child_ended(self, pgid: int) -> None: ...


_tracker: Tracker | None = None


@contextlib.contextmanager
def tracked_by(tracker: Tracker) -> Iterator[None]:
    """While the block runs, every child started through ``specd.agents.proc`` is reported to ``tracker``, and
    every process this one starts carries the run's owner mark, the git calls included: a `git commit` of a
    run killed mid-commit runs on unseen (nothing waits for it), and the next run must stop it before it commits
    anything itself (a TERM, on which git removes its index.lock, see ``stop_leftovers``)."""
    global _tracker
    previous, _tracker = _tracker, tracker
    mark = os.environ.get(OWNER_ENV)
    os.environ[OWNER_ENV] = tracker.token
    try:
        yield
    finally:
        _tracker = previous
        if mark is None:
            os.environ.pop(OWNER_ENV, None)
        else:
            os.environ[OWNER_ENV] = mark


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus the owner marker of the run holding the lock (if any)."""
    reaper.become_subreaper()  # before the child exists, so none of its orphans can slip past specd
    marked = dict(env)
    if _tracker is not None:
        marked[OWNER_ENV] = _tracker.token
    return marked


# The groups of children running now. A parallel group's members (specd/engine/group.py) run side by side, each
# from a thread of its own: one member's end must not sweep another's processes, which carry the same owner mark.
# A child is started and recorded under the same lock a sweep holds, so no sweep sees a child that is not yet
# recorded as running (and takes it for a leftover).
# Each child by its pid and its start time, so a record left by a child whose ``ended`` never came
# cannot spare a later process that got the same pid (pids wrap at 32768 on many machines).
_live: dict[int, str] = {}
_live_lock = threading.RLock()


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Held from a child's start until ``started`` recorded it (see ``specd.agents.proc.popen_child``)."""
    with _live_lock:
        yield


def started(pgid: int) -> None:
    with _live_lock:
        _live[pgid] = _born(pgid)
        if _tracker is not None:
            _tracker.child_started(pgid)


def running() -> bool:
    """Whether a child started through ``specd.agents.proc`` runs now (a parallel group's member, say)."""
    with _live_lock:
        return bool(_live)


def ended(pgid: int) -> None:
    """The child that led ``pgid`` is gone: kill what it left behind (sparing the children still running),
    then forget the group."""
    with _live_lock:
        _live.pop(pgid, None)
        for pid, born in list(_live.items()):
            if not born or _born(pid) != born:  # gone, or its pid names another process now: its ended never came
                del _live[pid]
        reaper.sweep(pgid, _tracker.token if _tracker is not None else None, frozenset(_live))
        if _tracker is not None:
            _tracker.child_ended(pgid)


def _born(pid: int) -> str:
    """When ``pid`` started, as psutil tells it; "" when it is gone."""
    import psutil

    try:
        return repr(psutil.Process(pid).create_time())
    except psutil.Error:
        return ""


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
    if not isinstance(token, str) or not token:
        return []  # without a token nothing proves a process is ours: leave it alone
    groups = {g for g in owner.get("children") or [] if isinstance(g, int) and g > 1}  # type: ignore[attr-defined]
    found = _ours(token, groups)
    for sig, grace in STOPPING:
        alive = [proc for proc in found if reaper.alive(proc)]
        for proc in alive:
            reaper.send(proc, sig)
        deadline = time.monotonic() + grace
        while any(reaper.alive(proc) for proc in alive) and time.monotonic() < deadline:
            time.sleep(0.05)
    return [proc.pid for proc in found]


def _ours(token: str, groups: set[int]) -> list[Process]:
    """Processes that carry the token, plus members of a recorded group that one of them proves ours."""
    everyone = [p for p in reaper.processes() if p.pid != os.getpid()]
    found = [p for p in everyone if reaper.marked(p, token) and reaper.alive(p)]
    # A recorded group member without the token (it cleared its env) is still stopped when a
    # member of the same group proves the group is ours.
    proven = {_pgid(p.pid) for p in found} & groups
    if proven:
        mine = {p.pid for p in found}
        found += [p for p in everyone if p.pid not in mine and _pgid(p.pid) in proven and reaper.alive(p)]
    return found


def _pgid(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except OSError:
        return -1


def protection() -> tuple[str, list[str]]:
    """How well this machine keeps children from outliving specd: the level, and what is missing."""
    from specd.system import jail

    missing = []
    if _PRCTL is None:
        missing.append("no death signal (Linux prctl PR_SET_PDEATHSIG): a child of a killed specd runs on "
                       "until the next run stops it")
        missing.append("no child subreaper (Linux): a child's orphaned processes are found only by their "
                       f"{OWNER_ENV} mark")
    if not jail.active():
        missing.append("no jail (bubblewrap PID namespace): nothing takes every descendant down with specd")
    if jail.active():
        return "jail", missing
    return ("subreaper+death signal" if _PRCTL is not None else "psutil-only"), missing
