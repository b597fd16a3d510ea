"""The shared demo run for tests/demo (one `specd demo`, read by several tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from demo_helpers import specd


@pytest.fixture(scope="module")
def demo_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One `specd demo --dir X` run (auto mode), shared by the tests that only read its results."""
    work = tmp_path_factory.mktemp("demo")
    result = specd("demo", "--dir", "X", cwd=work)
    return work / "X", result
