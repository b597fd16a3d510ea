"""The executor under test: every contract test runs once per executor (only "local" so far)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from executor_harness import LocalExecutor, Repo

EXECUTORS = {"local": LocalExecutor}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@pytest.fixture(params=sorted(EXECUTORS))
def executor(request: pytest.FixtureRequest, repo: Repo) -> Any:
    return EXECUTORS[request.param](repo)
