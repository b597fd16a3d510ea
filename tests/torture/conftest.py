"""Torture suites drive the real CLI; some reuse the brain tests' harness (tests/brain/brain_harness.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "brain"))
