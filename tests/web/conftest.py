"""A real project for the dashboard's tests: a finished task, a task waiting at a gate, files that try to leak.

The command agent prints a secret-named environment value and writes it into a task document, which the
step commits: the secret is then on disk and in git, and only the dashboard's redaction keeps it off pages.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "executors"))

from executor_harness import Repo  # noqa: E402

SECRET_NAME, SECRET = "SERVICE_API_TOKEN", "sk-live-9f8e7d6c5b4a39281706"
TOKEN = "test-token-0123456789abcdef"
DEADLINE = 60.0  # a safety net for reads from a real server
AGENT = r'''
import json, os, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
task, step = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"]
sys.stdin.read()
print("calling the service with", os.environ.get("SERVICE_API_TOKEN", "(none)"), flush=True)
Path(os.environ["SPECD_TASK_DIR"], "NOTES.md").write_text("token: " + os.environ.get("SERVICE_API_TOKEN", "") + "\n")
hold = HERE / f"hold-{task}"
if hold.exists():
    Path(f"held-{task}-{step}").write_text("held")
    while hold.exists():
        time.sleep(0.1)
Path(f"out-{task}-{step}.txt").write_text(f"{task} {step}\n")
usage = {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0125 if step == "s1" else 0.0311}
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": f"{step} of {task}",
                                                        "usage": usage}))
'''


class Site(Repo):
    """The harness project, with the leaking agent and a pipeline whose s2 has a gate in semi-auto."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path, steps=("s1", "s2"), pause="s2")
        (self.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        self.env[SECRET_NAME] = SECRET

    def run_to_end(self, task: str) -> None:
        done = self.specd("continue", task, "--auto", "--agent", self.agent())
        assert done.returncode == 0, done.stdout + done.stderr

    def run_to_gate(self, task: str) -> None:
        done = self.specd("continue", task, "--semi-auto", "--agent", self.agent())
        assert done.returncode == 3, done.stdout + done.stderr


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


def csrf() -> str:
    from specd.web.auth import csrf_token

    return csrf_token(TOKEN)


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("SPECD_STALL_SECONDS", "600")


class Server:
    def __init__(self, site: Site, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "specd", "ui", "--no-browser", "--port", "0", *args],
                                     cwd=site.root, env=site.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()  # the first line, whatever else is printed
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.token = parts.query.removeprefix("token=")

    def request(self, path: str, signed_in: bool = True) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        connection.putrequest("GET", path, skip_accept_encoding=True)  # sent as given: no client tidies ".."
        if signed_in:
            connection.putheader("Cookie", f"specd_ui={self.token}")
        connection.endheaders()
        return connection.getresponse()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=DEADLINE)
        return err
