"""A run that waits between steps for its worker to hand it the next one (SPECD_PARK=SECONDS).

A Temporal worker runs a task one step per activity (SPECD_STEPS=1). A run of its own for every step paid a run's
start and end each time (its imports were warm; its recovery check, secret search, lock and journal lines were
not). With SPECD_PARK, the run that stopped after its allowed steps saves, commits and reports everything
(``run_finished`` with ``parked``), says so (``run_parked``, once every listener of ``run_finished`` is done),
and waits:

- SIGUSR1: the worker pushed that step and found its clone still the remote's branch, untouched; the next step's
  activity hands this run the next step, which runs as if the run had never stopped (``run_resumed``);
- SIGTERM or SIGINT, or SECONDS without a word: the run ends as a run that paused ends, writing nothing more.

The signals are taken synchronously while it waits, so a stop is never an interrupt in the middle of anything, and
a SIGUSR1 that comes before the wait begins is kept (a handler notes it) rather than killing the process.
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable
from types import FrameType

PARK = "SPECD_PARK"
WAITED = frozenset({signal.SIGUSR1, signal.SIGTERM, signal.SIGINT})


class Parking:
    def __init__(self, limit: float) -> None:
        self.limit, self.handed = limit, False
        signal.signal(signal.SIGUSR1, self._handed)  # from now on: SIGUSR1's default would end the process

    def _handed(self, signum: int, frame: FrameType | None) -> None:
        self.handed = True

    def wait(self, announce: Callable[[], None]) -> bool:
        """``announce`` that the run waits (every write of the step behind it), then wait: True when the worker
        handed this run its next step; False when it is to end (asked, or timed out)."""
        before = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
        try:
            announce()  # with the signals held: a stop the worker sends once it reads this is never an interrupt
            if not self.handed:  # looked at with the signals held: one that comes now waits for sigtimedwait
                got = signal.sigtimedwait(WAITED, self.limit)
                self.handed = got is not None and got.si_signo == signal.SIGUSR1
            handed, self.handed = self.handed, False
            return handed
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def from_env() -> Parking | None:
    """SPECD_PARK, taken out of the environment (nothing the run starts inherits it); None when unset or not a
    positive number of seconds."""
    raw = os.environ.pop(PARK, "")
    try:
        limit = float(raw)
    except ValueError:
        return None
    return Parking(limit) if math.isfinite(limit) and limit > 0 else None
