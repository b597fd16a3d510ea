"""The executor under test: every contract test runs once per executor (local, and temporal on a dev server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from executor_harness import LocalExecutor, Repo
from temporal_harness import DevServer, TemporalExecutor

EXECUTORS = {"local": LocalExecutor, "temporal": TemporalExecutor}


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """One dev server for the session (per xdist worker); each test gets its own task queue and remote."""
    server = DevServer(tmp_path_factory.mktemp("temporal"))
    yield server
    server.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@pytest.fixture(params=sorted(EXECUTORS))
def executor(request: pytest.FixtureRequest, repo: Repo) -> Iterator[Any]:
    if request.param == "temporal":
        made: Any = TemporalExecutor(repo, request.getfixturevalue("temporal_server"))
    else:
        made = LocalExecutor(repo)
    yield made
    made.close()
