"""Every run this worker started for a task, until it is gone: a new attempt waits for all but the one it takes
over to end before it touches the task's clone.

A run is ended from many places, most of them a thread of its own that nobody waits for: a parked run nobody
took over (parked.py), one ended to make room, one whose attempt failed before it was handed on, one whose lease
lapsed, one forked after its attempt was stopped. Each still holds the task's lock (and may still write to the
clone) until it is gone. So before a step's attempt fetches into the clone or starts a run, it stops and reaps
every other run of the task here, and waits for a run still being forked. Stopping one already ending, or gone,
is harmless: ``attempt.stop`` signals only a run not yet reaped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from specd.executors import warm
from specd.executors.temporal import attempt


class Runs:
    """Touched from the worker's event loop only."""

    def __init__(self) -> None:
        self.live: dict[str, set[attempt.Proc]] = {}
        self.forking: dict[str, set[asyncio.Future[warm.Forked]]] = {}

    def forked(self, key: str, forking: asyncio.Future[warm.Forked]) -> None:
        """A run of ``key`` being started: known once it exists, even if its attempt stops before that."""
        pending = self.forking.setdefault(key, set())
        pending.add(forking)

        def done(future: asyncio.Future[warm.Forked]) -> None:
            pending.discard(future)
            if not pending and self.forking.get(key) is pending:
                del self.forking[key]
            if not future.cancelled() and future.exception() is None:
                self.started(key, future.result())

        forking.add_done_callback(done)

    def started(self, key: str, proc: attempt.Proc) -> None:
        runs = self.live.setdefault(key, set())
        runs.difference_update([run for run in runs if not attempt.alive(run)])  # a long-lived worker forgets
        runs.add(proc)

    async def settle(self, key: str, keep: attempt.Proc | None = None) -> None:
        """Every run of ``key`` here but ``keep`` has ended and been reaped."""
        pending = list(self.forking.get(key, ()))
        if pending:
            await asyncio.wait(pending)
        others = [run for run in self.live.get(key, ()) if run is not keep]
        if others:
            await asyncio.to_thread(_stop, others)
        runs = self.live.get(key)
        if runs is not None:
            runs.difference_update(others)
            if not runs:
                del self.live[key]


def _stop(runs: Iterable[attempt.Proc]) -> None:
    for run in runs:
        attempt.stop(run)
