"""Fixtures for the brain tests: ``h`` is a project plus a command agent (see brain_harness)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from brain_harness import Harness


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.cleanup()
