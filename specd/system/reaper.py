"""Nothing a child started outlives the step: the fallback half of "no child outlives specd".

Under bubblewrap the PID namespace does this by itself. Without it (or for a
hook with `sandbox: false`) a shell's `sleep 30 &` would run on after the hook
ends. So specd makes itself a child subreaper: an orphaned grandchild is
reparented to specd instead of init, which means every process the child ever
started stays a descendant of specd. When the child ends, each descendant in
its session, or carrying the run's owner marker, is killed and reaped. Only
specd's own descendants are ever signalled, so a reused pid is never someone
else's process. Processes are found through ``psutil`` (imported on first use, never by read-only
commands), which works on Linux and macOS alike.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from psutil import Process

OWNER_ENV = "SPECD_OWNER"
PR_SET_CHILD_SUBREAPER = 36
KILL_WAIT = 2.0  # seconds for SIGKILLed processes to be gone (the kernel needs no more)


def processes() -> list[Process]:
    """Every process this user can see."""
    import psutil

    return list(psutil.process_iter())


def alive(proc: Process) -> bool:
    """Running, and not a zombie (a zombie has already stopped)."""
    import psutil

    try:
        return proc.is_running() and proc.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.Error:
        return False


def marked(proc: Process, token: str | None) -> bool:
    """Carries ``SPECD_OWNER=<token>`` in its environment."""
    import psutil

    if not token:
        return False
    try:
        return proc.environ().get(OWNER_ENV) == token
    except psutil.Error:
        return False  # gone already, or not ours to read


def send(proc: Process, sig: int) -> None:
    """Signal ``proc`` unless it is gone; psutil refuses a pid that was reused by another process meanwhile."""
    import psutil

    with contextlib.suppress(psutil.Error):
        proc.send_signal(sig)


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


def sweep(session: int, token: str | None = None, spare: frozenset[int] = frozenset()) -> list[int]:
    """Kill and reap specd's descendants in ``session`` (a child that led it) or carrying the run's
    ``token``, but for those in the sessions of ``spare`` (children still running); returns their pids."""
    me = os.getpid()
    descendants = _descendants(me)
    if spare:  # a spared child's whole tree: a jailed one's processes sit in sessions of their own
        # Followed down the parents of the descendants listed once: a look at the whole process table for each
        # spared child cost `specd run -j 20` a second of CPU, twenty children spared at each child's end.
        parents = {p.pid: _parent(p) for p in descendants}
        kept = {pid for pid in parents if pid in spare or _session(pid) in spare}
        below = {pid for pid, parent in parents.items() if parent in kept} - kept
        while below:
            kept |= below
            below = {pid for pid, parent in parents.items() if parent in below} - kept
        descendants = [p for p in descendants if p.pid not in kept]
    found = [p for p in descendants if _session(p.pid) == session or marked(p, token)]
    for proc in found:
        send(proc, signal.SIGKILL)
    deadline = time.monotonic() + KILL_WAIT
    for proc in found:
        if _parent(proc) == me:  # ours to reap; a grandchild is reaped by its own parent
            _reap(proc.pid, deadline)
    # An orphan reparented to specd (its subreaper) that already exited, in a session of its own: bubblewrap's
    # init inside the jail's PID namespace outlives the bwrap that started it by a moment. Nothing waits for
    # it, so without this every jailed step left a zombie, and each sweep had more processes to look at.
    # A Popen still waiting for its child (a parallel group's other member) is spared above, with its session.
    # One still alive is such an init whose command has ended (a bwrap reparented to specd, started by no child
    # that runs): it is on its way out, and is ended now rather than left to become a zombie nothing reaps.
    for proc in descendants:
        if proc in found or _parent(proc) != me or proc.pid in spare:
            continue
        if alive(proc) and _name(proc) == "bwrap":
            send(proc, signal.SIGKILL)
            _reap(proc.pid, deadline)
        elif not alive(proc):
            _reap(proc.pid, deadline)
    return [proc.pid for proc in found]


def _descendants(me: int) -> list[Process]:
    """Every process below ``me``. On Linux each thread's ``children`` file in procfs is followed down from
    ``me``: a look at specd's own few, where psutil reads the stat file of every process on the machine (a
    desktop has hundreds, and a sweep comes after every step of every task). psutil's way where those files
    are missing (a kernel without CONFIG_PROC_CHILDREN, or not Linux)."""
    import psutil

    below = _children_files(me)
    if below is None:
        return list(psutil.Process(me).children(recursive=True))
    found: list[Process] = []
    for pid in below:
        with contextlib.suppress(psutil.Error):  # ended meanwhile: nothing to kill or reap
            found.append(psutil.Process(pid))
    return found


def _children_files(me: int) -> list[int] | None:
    """The pids below ``me``, parents before their children, read from procfs; None when it cannot tell.
    Strings, not Path objects: it runs after every step."""
    seen, order = {me}, [me]
    for pid in order:  # grows while it is walked: each process found is looked into in turn
        try:
            threads = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208
        except OSError:
            if pid == me:
                return None
            continue  # ended meanwhile
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:  # noqa: PTH123
                    kids = handle.read().split()
            except FileNotFoundError:
                if pid == me:
                    return None  # no such file on this kernel (or a thread that just ended: asked again next time)
                continue
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in seen:
                    seen.add(kid)
                    order.append(kid)
    return order[1:]


def _name(proc: Process) -> str:
    import psutil

    try:
        return str(proc.name())
    except psutil.Error:
        return ""


def _session(pid: int) -> int:
    try:
        return os.getsid(pid)
    except OSError:
        return -1


def _parent(proc: Process) -> int:
    import psutil

    try:
        return proc.ppid()
    except psutil.Error:
        return -1


def _reap(pid: int, deadline: float) -> None:
    """Reap ``pid`` (just killed) once it has ended, or give up at ``deadline``. Asleep on a pidfd, which is
    readable the moment the process ends: a 10 ms poll here, late by up to that much, came after every jailed
    step (bubblewrap's init outlives its bwrap by a moment). A sleeping poll where there is no pidfd."""
    handle: int | None = None
    try:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return  # already reaped (by a Popen that owned it)
            left = deadline - time.monotonic()
            if done or left <= 0:
                return
            if handle is None:  # opened only now: unreaped, the pid is still this child's
                with contextlib.suppress(AttributeError, OSError):
                    handle = os.pidfd_open(pid)
            if handle is not None:
                select.select([handle], [], [], left)
            else:
                time.sleep(min(0.01, left))
    finally:
        if handle is not None:
            os.close(handle)
