"""The Temporal executor: one workflow per task, workers on many machines, gates as signals.

Only this package (and the commands that use it) ever import ``temporalio``; it is an optional extra, so every
entry point checks for it first with ``require()`` and names the pip command when it is missing.
"""

from __future__ import annotations

from specd import DISTRIBUTION
from specd.errors import UsageError

INSTALL = f"pip install '{DISTRIBUTION}[temporal]'"


def available() -> bool:
    try:
        import temporalio  # noqa: F401
    except ImportError:
        return False
    return True


def require() -> None:
    if not available():
        raise UsageError("the Temporal executor needs the temporalio package, which is not installed",
                         fix=f"`{INSTALL}` (it adds temporalio and the temporal CLI)")
