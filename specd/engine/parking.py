"""A run that waits between steps for its worker to hand it the next one (SPECD_PARK=SECONDS:PID).

A Temporal worker runs a task one step per activity (SPECD_STEPS=1). A run of its own for every step paid a run's
start and end each time (its imports were warm; its recovery check, secret search, lock and journal lines were
not). With SPECD_PARK, the run that stopped after its allowed steps saves, commits and reports everything
(``run_finished`` with ``parked``), says so (``run_parked``, once every listener of ``run_finished`` is done),
and waits:

- SIGUSR1 from PID (the worker): it pushed that step and found its clone still the remote's branch, untouched;
  the next step's activity hands this run the next step, which runs as if the run had never stopped
  (``run_resumed``). A SIGUSR1 from anyone else is ignored, at any time;
- SIGTERM or SIGINT, or SECONDS without a word: the run ends as a run that paused ends, writing nothing more.

The signals are taken synchronously while it waits, so a stop is never an interrupt in the middle of anything.
"""

from __future__ import annotations

import math
import os
import signal
import time
from collections.abc import Callable
from types import FrameType

PARK = "SPECD_PARK"
WAITED = frozenset({signal.SIGUSR1, signal.SIGTERM, signal.SIGINT})


class Parking:
    def __init__(self, limit: float, by: int) -> None:
        self.limit, self.by = limit, by
        signal.signal(signal.SIGUSR1, _ignored)  # never its default (the end of the process); only a wait takes it

    def wait(self, announce: Callable[[], None]) -> bool:
        """``announce`` that the run waits (every write of the step behind it), then wait: True when the worker
        handed this run its next step; False when it is to end (asked, or timed out)."""
        before = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
        try:
            announce()  # with the signals held: a stop the worker sends once it reads this is never an interrupt
            deadline = time.monotonic() + self.limit
            while (left := deadline - time.monotonic()) > 0:
                got = signal.sigtimedwait(WAITED, left)
                if got is None or got.si_signo != signal.SIGUSR1:
                    return False
                if got.si_pid == self.by:
                    return True
            return False
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _ignored(signum: int, frame: FrameType | None) -> None:
    return None


def from_env(steps: bool) -> Parking | None:
    """SPECD_PARK, taken out of the environment (nothing the run starts inherits it); None when it is not
    ``SECONDS:PID`` with a positive number of seconds, or when the run has no allowed ``steps`` (SPECD_STEPS)
    to stop after: such a run never waits, and keeps SIGUSR1's default."""
    seconds, _, by = os.environ.pop(PARK, "").partition(":")
    try:
        limit = float(seconds)
    except ValueError:
        return None
    return Parking(limit, int(by)) if steps and math.isfinite(limit) and limit > 0 and by.isdigit() else None
