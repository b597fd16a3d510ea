"""Work over many items on two cores: a forked copy of this process does the second half.

A cold `specd status` over 10,000 tasks spends most of its time in system calls (a `stat`, a listing and two
reads a task) and in decoding small JSON files, one task after another. Threads do not help: Python holds its
lock around all but the system call itself, and two threads took twice as long as one. A forked child shares
everything already imported and loaded, works its half, and sends the results back pickled through a pipe
(it is this same program, so unpickling trusts nothing it did not already trust).

Only what cannot go wrong is handed to the child: if it fails in any way (an exception, a signal, a result
that does not arrive whole), the parent works that half itself, so the answer is always the serial one. A
process with other threads never forks (a lock held by another thread would stay held in the child), nor one
with a single core, nor for fewer items than are worth a fork.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
MIN_ITEMS = 2_000  # below this a fork (a few ms for a big heap) costs more than half the work saves


def fork_map(func: Callable[[T], R], items: Sequence[T], min_items: int = MIN_ITEMS) -> list[R]:
    """``[func(item) for item in items]``, the second half worked by a forked child when that pays."""
    if len(items) < min_items or (os.cpu_count() or 1) < 2 or threading.active_count() > 1 or not hasattr(os, "fork"):
        return [func(item) for item in items]
    half = len(items) // 2
    first, second = items[:half], items[half:]
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError:
        return [func(item) for item in items]
    if pid == 0:  # the child: never returns into the caller's code
        os.close(read_end)
        code = 1
        try:
            data = pickle.dumps([func(item) for item in second], protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        except BaseException:  # noqa: BLE001, S110 - any failure: the parent does this half itself
            pass
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        mine = [func(item) for item in first]
    except BaseException:
        os.close(read_end)  # the child's write fails, it exits, and is reaped: nothing is left behind
        os.waitpid(pid, 0)
        raise
    return mine + _collect(pid, read_end, second, func)


def _collect(pid: int, read_end: int, items: Sequence[T], func: Callable[[T], R]) -> list[R]:
    """The child's results, or the same worked here when it did not deliver them whole."""
    try:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
    except BaseException:  # Ctrl-C while waiting: the child is stopped and reaped, not left behind
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        with contextlib.suppress(Exception):
            results = pickle.loads(data)  # noqa: S301 - written by a fork of this very process
            if isinstance(results, list) and len(results) == len(items):
                return results
    return [func(item) for item in items]
