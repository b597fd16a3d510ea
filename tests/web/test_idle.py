"""An IN_PROGRESS task that no process runs is never shown as IN_PROGRESS: it is ANSWERED (the control plane
starts it; Continue) or STOPPED (a run killed mid-step; Run), on the page, in its live badge and in `status --json`.
The pages are called in-process, with a fake control plane that records what it is asked to start."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import DEADLINE, SECRET_NAME, TOKEN, Site, csrf

from specd.errors import UsageError


class FakePlane:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def ask(self, task: str) -> str:
        if task == "fresh-needs":
            raise UsageError("task 'fresh-needs' needs x", fix="run x first")
        self.asked.append(task)
        return f"{task} runs now"


@pytest.fixture(scope="module")
def idle_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """answered: approved at its gate, nothing runs it; stopped: its run killed in s1; fresh: never run."""
    site = Site(tmp_path_factory.mktemp("idle"))
    site.env.pop(SECRET_NAME)  # no secret in the notes: no step is held for one
    for task in ("answered", "stopped", "fresh"):
        site.new(task)
    site.run_to_gate("answered")
    assert site.specd("approve", "answered", "--note", "go").returncode == 0
    (site.dir / "hold-stopped").write_text("")
    run = subprocess.Popen([sys.executable, "-m", "specd", "continue", "stopped", "--semi-auto", "--agent",
                            site.agent()], cwd=site.root, env=site.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + DEADLINE
    while not (site.root / "held-stopped-s1").exists():
        assert run.poll() is None, "the run ended before its agent started"
        assert time.monotonic() < deadline, "the run never reached its agent"
        time.sleep(0.1)
    run.send_signal(signal.SIGKILL)  # no chance to save its end: the state stays IN_PROGRESS
    run.wait()
    (site.dir / "hold-stopped").unlink()
    return site


@pytest.fixture
def pages(idle_site: Site) -> Iterator[tuple[Any, FakePlane]]:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    plane = FakePlane()
    with TestClient(create_app(Project(idle_site.root), TOKEN, plane), base_url="http://127.0.0.1:8765") as client:
        client.cookies.set("specd_ui", TOKEN)
        yield client, plane


def _rows(html: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-task="([^"]+)" data-status="([^"]+)">', html))


def test_idle_tasks_are_shown_as_what_they_are(pages: tuple[Any, FakePlane], idle_site: Site) -> None:
    client, _ = pages
    assert _rows(client.get("/").text) == {"answered": "ANSWERED", "stopped": "STOPPED", "fresh": "NOT_STARTED"}
    assert _rows(client.get("/rows?status=ANSWERED").text) == {"answered": "ANSWERED"}
    assert _rows(client.get("/?status=IN_PROGRESS").text) == {}  # nothing runs
    for task, shown, saved in (("answered", "answered", "IN_PROGRESS"), ("stopped", "stopped", "IN_PROGRESS")):
        data = json.loads(idle_site.specd("status", task, "--json").stdout)
        assert (data["status"], data["idle"]) == (saved, shown)  # the JSON says what the page shows
    listing = json.loads(idle_site.specd("status", "--json").stdout)["tasks"]
    assert {r["task"]: r.get("idle") for r in listing} == {"answered": "answered", "stopped": "stopped",
                                                            "fresh": None}
    table = idle_site.specd("status").stdout.splitlines()  # the terminal names them as the page does, in its order
    assert [line.split()[:2] for line in table[1:]] == [["answered", "ANSWERED"], ["stopped", "STOPPED"],
                                                        ["fresh", "NOT_STARTED"]]
    for task, shown in (("answered", "ANSWERED"), ("stopped", "STOPPED")):  # and `status TASK` names it so too
        assert idle_site.specd("status", task).stdout.split()[:2] == [task, shown]


def test_the_live_badge_says_the_same(idle_site: Site) -> None:
    from specd.web.live import read_status

    folder = idle_site.root / ".specd" / "tasks"
    assert read_status(folder / "answered") == "ANSWERED"
    assert read_status(folder / "stopped") == "STOPPED"
    assert read_status(folder / "fresh") == "NOT_STARTED"


def test_continue_and_run_ask_the_control_plane(pages: tuple[Any, FakePlane]) -> None:
    client, plane = pages
    answered = client.get("/tasks/answered").text
    assert 'id="continue"' in answered
    assert 'id="run"' not in answered
    assert 'class="status s-ANSWERED">ANSWERED<' in answered
    assert 'id="run"' in client.get("/tasks/stopped").text
    assert 'id="run"' in client.get("/tasks/fresh").text
    for task, verb in (("answered", "continue"), ("stopped", "run"), ("fresh", "run")):
        reply = client.post(f"/tasks/{task}/{verb}", data={"csrf": csrf()}, follow_redirects=False)
        assert reply.status_code == 303, reply.text
        assert "asked. This page follows it" in client.get(reply.headers["location"]).text
    assert plane.asked == ["answered", "stopped", "fresh"]
    refused = client.post("/tasks/fresh/run", data={"csrf": "wrong"}, follow_redirects=False)
    assert refused.status_code == 403
    assert plane.asked == ["answered", "stopped", "fresh"]  # a forged form starts nothing


def test_without_a_control_plane_run_is_refused_with_the_fix(idle_site: Site) -> None:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    with TestClient(create_app(Project(idle_site.root), TOKEN), base_url="http://127.0.0.1:8765") as client:
        client.cookies.set("specd_ui", TOKEN)
        assert 'id="continue"' not in client.get("/tasks/answered").text
        reply = client.post("/tasks/fresh/run", data={"csrf": csrf()}, follow_redirects=False)
        assert reply.status_code == 400
        assert "runs no control plane" in reply.text
        assert "specd continue fresh" in reply.text


def test_the_control_plane_refuses_what_is_not_ready(idle_site: Site, tmp_path: Path) -> None:
    from specd.executors.plane import ControlPlane
    from specd.executors.results import Settings
    from specd.tasks.project import Project

    plane = ControlPlane(Project(idle_site.root), Settings(), lambda task, event: None, serve=True)
    idle_site.new("later")
    config = idle_site.root / ".specd" / "tasks" / "later" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "depends_on": ["fresh"]}))
    with pytest.raises(UsageError, match="needs fresh, not complete yet"):
        plane.ask("later")
    idle_site.run_to_gate("fresh")
    with pytest.raises(UsageError, match="is WAITING_FOR_HUMAN") as refused:
        plane.ask("fresh")
    assert "specd approve fresh" in str(refused.value.fix)


def test_the_tasks_list_offers_continue_and_run_where_they_apply(pages: tuple[Any, FakePlane], idle_site: Site) -> None:
    client, _ = pages
    idle_site.new("another")  # never run, needs nothing
    idle_site.new("after", "another")  # never run, needs a task not complete: no Run yet
    html = client.get("/").text
    rows = {task: cells for task, cells in re.findall(r'<tr data-task="([^"]+)"[^>]*>(.*?)</tr>', html, re.DOTALL)}
    assert 'action="/tasks/answered/continue"' in rows["answered"]
    assert 'action="/tasks/stopped/run"' in rows["stopped"]
    assert 'action="/tasks/another/run"' in rows["another"]
    assert "/run" not in rows["after"]
    assert "/run" not in rows["answered"]
