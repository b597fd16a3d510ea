"""Suite sizes: modest in CI; `SPECD_TORTURE=large` selects the sizes docs/reliability.md reports."""

from __future__ import annotations

import os

LARGE = os.environ.get("SPECD_TORTURE", "") == "large"


def size(ci: int, large: int) -> int:
    return large if LARGE else ci
