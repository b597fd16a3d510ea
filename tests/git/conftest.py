"""Fixtures for the git tests: ``gp`` is a real repository with specd set up (see git_harness)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from git_harness import GitProject


@pytest.fixture
def gp(tmp_path: Path) -> GitProject:
    if shutil.which("git") is None:
        pytest.fail("git is required for these tests")
    return GitProject(tmp_path)
