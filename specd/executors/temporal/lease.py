"""The lease an attempt holds on its task while its heartbeats go out on time (read by specd.git.publish).

Temporal gives a step to another worker once the heartbeats of its attempt stop for the heartbeat timeout. An
attempt cannot learn that from the server in time (a frozen machine learns nothing until it wakes), so it keeps a
lease shorter than that timeout, renewed by the same timer that heartbeats: half the timeout, and the heartbeats
reach the server at least every quarter of it (worker.throttle). Once a renewal comes after the lease ended, the
lease is given up for good: nothing the attempt does afterwards (its child's push, its own, the agent's result)
counts. Each attempt has its own file, so a later attempt's renewals never revive an earlier one's lease.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path


class Lease:
    def __init__(self, folder: Path, length: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path, self.length = folder / f"lease-{uuid.uuid4().hex}", length
        self.until = 0.0
        self._write(time.time() + length)

    def renew(self) -> bool:
        """Extend the lease from now; False (and given up) when it had already ended."""
        now = time.time()
        if not self.held(now):
            self.give_up()
            return False
        self._write(now + self.length)  # from the time it was checked: a pause before the write lapses it too
        return True

    def held(self, now: float | None = None) -> bool:
        return self.until > 0 and (time.time() if now is None else now) < self.until

    def give_up(self) -> None:
        if self.until:
            self._write(0.0)

    def close(self) -> None:
        self.until = 0.0
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _write(self, until: float) -> None:
        self.until = until
        scratch = self.path.with_suffix(".new")
        scratch.write_text(repr(until), encoding="utf-8")
        os.replace(scratch, self.path)  # the child reads a whole number, never half of one
