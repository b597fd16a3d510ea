"""The state tests drive the real CLI with the brain tests' harness (tests/brain/brain_harness.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "brain"))

from brain_harness import Harness  # noqa: E402


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.cleanup()
