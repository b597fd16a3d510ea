"""Torture suites: modest at CI size; `SPECD_TORTURE=large` selects the sizes docs/reliability.md reports."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "brain"))

LARGE = os.environ.get("SPECD_TORTURE", "") == "large"


def size(ci: int, large: int) -> int:
    return large if LARGE else ci
