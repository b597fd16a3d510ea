"""Fixtures for the specdacular drop-in tests: ``sp`` is a project plus a logging command agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from spd_kit import Project


@pytest.fixture
def sp(tmp_path: Path) -> Project:
    return Project(tmp_path)
