"""Bring many small folders and files into the page cache at once, when the disk is what a listing waits for.

A listing after a reboot (or once the page cache dropped its folders) reads 10,000 task folders from the disk:
their entries, the inodes of the files in them and two small files each. One after another, that is a disk
round trip at a time (4 s at 10,000 tasks here, where the same listing from the cache takes 1 s). The reads
block in the kernel, outside Python's lock, so threads overlap them: the disk serves many at once.

Whether the disk is cold is found by looking at the first folders as the listing would (``PROBE`` of them):
from the cache that takes a few µs a folder and reads no block from the disk; from the disk, a round trip each
and blocks read (the process's ``ru_inblock``). Only a probe that is slow and read from the disk starts the
threads: one that is only slow (a busy machine, a tracer) does not, and where the kernel does not count the
blocks the threads never start. They only read (a listing, the named files' first bytes), and are all joined
before this returns, so nothing changes for the caller but the time (and a fork after it is still safe).
Whatever fails is left to the caller's own look, which reports it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence

PROBE = 48  # folders looked at first, to tell a cold disk from the cache
SLOW_NS = 6_000_000  # the probe took longer: the folders come from the disk (from the cache: well under 2 ms)
MIN_BLOCKS = PROBE  # and read at least this many blocks from the disk (from the cache: none)
THREADS = 8  # reads in flight at once (4 gave most of the gain here; more costs CPU for little)
CHUNK = 4096


def warm(folders: Sequence[str], names: Sequence[str]) -> bool:
    """Read ``folders`` (each listed, and its ``names`` read) into the page cache with threads, if the first
    of them show the disk is cold; True when it did."""
    if len(folders) <= 2 * PROBE:
        return False
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: no count of blocks read
        return False
    start, blocks = time.perf_counter_ns(), resource.getrusage(resource.RUSAGE_SELF).ru_inblock
    for folder in folders[:PROBE]:
        _touch(folder, names)
    if (time.perf_counter_ns() - start < SLOW_NS
            or resource.getrusage(resource.RUSAGE_SELF).ru_inblock - blocks < MIN_BLOCKS):
        return False
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(THREADS) as pool:  # joined on leaving: no thread is left when a fork follows
        for _ in pool.map(lambda folder: _touch(folder, names), folders[PROBE:], chunksize=64):
            pass
    return True


def _touch(folder: str, names: Sequence[str]) -> None:
    with contextlib.suppress(OSError):
        os.listdir(folder)  # noqa: PTH208 - strings: no Path object per folder
        for name in names:
            with contextlib.suppress(OSError):
                fd = os.open(f"{folder}/{name}", os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block
                try:
                    os.read(fd, CHUNK)
                finally:
                    os.close(fd)
