"""Gate policy per mode (pure functions).

- interactive: a gate before every enabled step;
- semi-auto: a gate only before steps marked ``pause_in_semi_auto``;
- auto: no gates at all.
"""

from __future__ import annotations

from specd.errors import UsageError
from specd.pipeline.model import Step

MODES = ("interactive", "semi-auto", "auto")


def resolve_mode(flag: str | None, pipeline_mode: str | None) -> str:
    """Precedence: CLI flag → pipeline ``mode`` → interactive."""
    mode = flag or pipeline_mode or "interactive"
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", fix=f"use one of: {', '.join(MODES)}")
    return mode


def needs_gate(mode: str, step: Step) -> bool:
    if not step.enabled or mode == "auto":
        return False
    return mode == "interactive" or step.pause_in_semi_auto


def human_present(mode: str) -> bool:
    return mode != "auto"
