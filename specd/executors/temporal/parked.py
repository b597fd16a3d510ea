"""Runs that wait on this worker for their task's next step (engine/parking.py), at most one a task.

A step's run (SPECD_STEPS=1, SPECD_PARK) does not end once its step is done: the activity pushes what it committed
and leaves the run parked here. The task's next activity on this worker takes it over, and wakes it with SIGUSR1,
only when nothing could have changed under it: the clone is still the remote's branch as this worker pushed it,
untouched (``clones.prepare``'s ``kept``), no answer is to be applied to its files, and its budget is the same.
Otherwise the parked run is stopped (it ends writing nothing) before anything touches the clone, and a fresh run
starts from the files, exactly as before. A run nobody takes over within IDLE seconds (the next step went to
another worker) is stopped too, and one whose worker never says ends itself after LIMIT seconds. At most MOST
runs wait on a worker (each is a process, with its memory): past that, the one waiting longest ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from dataclasses import dataclass, field
from typing import IO

from specd.executors.temporal import attempt

IDLE = 15.0
LIMIT = 60.0
MOST = 8


@dataclass
class Parked:
    proc: attempt.Proc
    feed: attempt.Feed
    errors: IO[bytes]  # the run's stderr, the same file for all its steps
    cap: float | None  # the --max-cost it runs with
    timer: asyncio.TimerHandle | None = None
    _ended: threading.Lock = field(default_factory=threading.Lock)

    def end(self) -> None:
        """Stop the run and wait for it (it writes nothing more); once, from any thread but the event loop's."""
        if not self._ended.acquire(blocking=False):
            return
        attempt.stop(self.proc)
        self.errors.close()

    @property
    def ended(self) -> bool:
        return self._ended.locked()


class Parking:
    """This worker's parked runs, by task (its repository key and name); touched from the event loop only."""

    def __init__(self) -> None:
        self.runs: dict[str, Parked] = {}

    def park(self, key: str, parked: Parked) -> None:
        self.drop(key)
        while len(self.runs) >= MOST:
            self.drop(next(iter(self.runs)))  # the oldest: dicts keep their order
        parked.timer = asyncio.get_running_loop().call_later(IDLE, self.drop, key)
        self.runs[key] = parked

    def take(self, key: str) -> Parked | None:
        """The task's parked run, now the caller's to take over or end."""
        parked = self.runs.pop(key, None)
        if parked is not None and parked.timer is not None:
            parked.timer.cancel()
        return parked

    def drop(self, key: str) -> None:
        parked = self.take(key)
        if parked is not None:
            threading.Thread(target=parked.end, daemon=True).start()

    def stop_all(self) -> None:
        for key in list(self.runs):
            self.drop(key)


async def ended(parked: Parked | None) -> None:
    """End a parked run, if any, from a thread (it may wait for the run to end)."""
    if parked is not None:
        await asyncio.to_thread(parked.end)


async def wake(parked: Parked, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[attempt.Line]
                ) -> attempt.Proc | None:
    """Hand the parked run its next step: the run, going on; None when it had ended on its own (then ended here
    too, and the step starts a fresh run)."""
    parked.feed.to(loop, lines)
    if attempt.alive(parked.proc):
        with contextlib.suppress(ProcessLookupError):
            os.kill(parked.proc.pid, signal.SIGUSR1)
    first = await lines.get()
    if first is not None and first.get("kind") == "run_resumed":
        return parked.proc
    await ended(parked)
    return None
