"""The keeper: a small parent between specd and a child that runs outside the jail, so nothing it starts
outlives specd, kill -9 of specd included.

Under bubblewrap the jail's PID namespace takes every process of a step down with specd. Outside it (no
bubblewrap, or `sandbox: false`), a child's own children are found after a kill -9 of specd only by their
process group or their ``SPECD_OWNER`` mark (``children.stop_leftovers``): one that leaves its group and clears
its environment would run on. So the command runs under this keeper, which

- is the child subreaper of everything the command starts: an orphan is re-parented to the keeper, never to
  init, so every descendant stays in the keeper's tree, whatever its group, session or environment;
- gets SIGTERM (its death signal) the moment specd dies, SIGKILL included, and then kills its whole tree;
- asked to stop while specd lives, lets the command end by itself; asked a second time, kills its whole tree
  (specd asks twice before its SIGKILL, which would kill the keeper and set a `setsid` grandchild free);
- when the command ends, kills what the command left behind and ends as the command did (its exit status,
  or the same signal), so specd sees the command's own result.

Only SIGKILL sent to the keeper itself, or a descendant that escapes by ptrace or a setuid program, gets past
it. It runs as a script (``python -S -E keeper.py ARGV...``): no import of specd, so it starts in milliseconds.
Linux only (prctl); elsewhere it just runs the command.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def descendants(root: int) -> list[int]:
    """Every live process under ``root``, found through /proc (parents first)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text(errors="replace").rsplit(")", 1)[1].split()
                if fields[0] not in ("Z", "X"):
                    parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def kill_tree() -> None:
    """SIGKILL every descendant and reap it, until none is left (a process forked meanwhile is found next round)."""
    me, deadline = os.getpid(), time.monotonic() + 10
    while time.monotonic() < deadline:
        left = descendants(me)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if not left:
            return
        time.sleep(0.01)


class Orphaned(Exception):
    """specd is gone (the death signal came, or it died before the signal was set)."""


def main(argv: list[str]) -> None:
    # specd's pid, as specd gave it: a specd that died before the death signal below was set is seen, since
    # then the parent is another process already (an init or a subreaper), and the command never starts.
    # A specd from before this argument (a `specd serve` left running across an upgrade) passes the command alone.
    parent, argv = (int(argv[0]), argv[1:]) if argv and argv[0].isdigit() else (os.getppid(), argv)
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # replaces the SIGKILL specd asked for: we clean up first
    except (OSError, AttributeError):
        os.execvp(argv[0], argv)
    if os.getppid() != parent:
        os._exit(137)  # specd is gone already: as if the death signal had come

    asked: list[int] = []

    def stop(signum: int, frame: object) -> None:
        # specd stopping a step signals the whole group, the command with it: wait for the command to end then.
        # Asked again, the command ignores it: end its tree now, before the SIGKILL that would set it free.
        asked.append(signum)
        if os.getppid() != parent or len(asked) > 1:
            raise Orphaned

    for sig in STOPS:
        signal.signal(sig, stop)
    status = None
    try:
        if os.getppid() != parent:
            raise Orphaned
        child = os.fork()
        if child == 0:
            for sig in (*STOPS, signal.SIGPIPE, signal.SIGXFSZ):  # as subprocess leaves them for a command
                signal.signal(sig, signal.SIG_DFL)
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        while status is None:
            pid, code = os.waitpid(-1, 0)  # every orphan comes here too; only the command's end matters
            if pid == child:
                status = code
        kill_tree()  # what the command left behind ends with it
    except Orphaned:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # one clean-up: another signal must not cut it short
        kill_tree()  # specd is gone, or asks twice: so is everything it started
        os._exit(137)
    except ChildProcessError:
        pass
    if status is not None and os.WIFSIGNALED(status):  # end the same way, so specd reads the command's own end
        if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if status is not None else 1)


def argv(command: str | list[str]) -> list[str]:
    """How specd starts ``command`` (a shell line or an argv) under the keeper; as it is where there is no prctl."""
    inner = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    if not sys.platform.startswith("linux"):
        return inner
    return [sys.executable, "-S", "-E", str(Path(__file__).resolve()), str(os.getpid()), *inner]


def guards(args: str | list[str]) -> bool:
    """Whether ``args`` start the keeper, which sets its own death signal (``main``)."""
    return isinstance(args, list) and args[2:4] == ["-E", str(Path(__file__).resolve())]


if __name__ == "__main__":
    main(sys.argv[1:])
