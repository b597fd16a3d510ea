"""Fixtures of the dashboard's tests; the project and the server they use live in web_harness.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from web_harness import SECRET, SECRET_NAME, TOKEN, Site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """done: COMPLETE; waits: WAITING_FOR_HUMAN at the gate before s2; fresh: NOT_STARTED; and symlinks out."""
    site = Site(tmp_path_factory.mktemp("web"))
    for task in ("done", "waits", "fresh"):
        site.new(task)
    site.run_to_end("done")
    site.run_to_gate("waits")
    folder = site.root / ".specd" / "tasks" / "done"
    (folder / "escape.md").symlink_to("/etc/passwd")
    (folder / "outside").symlink_to(site.root)
    (folder / "alias.md").symlink_to(folder / "NOTES.md")
    return site


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's environment holds the secret, as a user's shell would: redaction knows it from there."""
    monkeypatch.setenv(SECRET_NAME, SECRET)


@pytest.fixture
def client(site: Site, secret_env: None) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    with TestClient(create_app(Project(site.root), TOKEN), base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


@pytest.fixture
def signed_in(client: Any) -> Any:
    client.cookies.set("specd_ui", TOKEN)
    return client
