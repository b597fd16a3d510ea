"""The pages and the buttons, called in-process: what a task shows, and answers recorded as the CLI records them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from web_harness import TOKEN, Site, csrf


def _rows(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr data-task="([^"]+)" data-status="([^"]+)">', html)


def test_the_tasks_page_lists_every_task_waiting_first_and_filters(signed_in: Any) -> None:
    rows = _rows(signed_in.get("/").text)
    assert rows == [("waits", "WAITING_FOR_HUMAN"), ("fresh", "NOT_STARTED"), ("done", "COMPLETE")]
    assert _rows(signed_in.get("/?status=COMPLETE").text) == [("done", "COMPLETE")]
    assert _rows(signed_in.get("/rows?status=WAITING_FOR_HUMAN").text) == [("waits", "WAITING_FOR_HUMAN")]
    page = signed_in.get("/").text
    assert "approval at the gate before s2" in page
    assert "$0.0436" in page  # done's two steps: 0.0125 + 0.0311


def test_a_task_page_draws_the_pipeline_the_timeline_and_the_cost(signed_in: Any) -> None:
    page = signed_in.get("/tasks/waits").text
    assert 'aria-label="pipeline"' in page
    assert re.search(r'class="step current" data-step="s2"', page)  # the run's position
    assert re.search(r'class="step done" data-step="s1"', page)
    assert 'aria-label="step timeline"' in page
    assert 'aria-label="cost over steps"' in page
    assert 'id="approve"' in page
    assert not re.search(r'(src|href)="(https?:)?//|url\((https?:)?//', page)  # nothing from the network
    done = signed_in.get("/tasks/done").text
    assert 'id="approve"' not in done  # only a waiting task has answers to give
    step = signed_in.get("/tasks/done/steps/1").text
    assert "docs(done): s2 complete" in step  # the step's commit
    assert "out-done-s2.txt" in step


@pytest.fixture
def fresh_site(tmp_path: Path, secret_env: None) -> tuple[Site, Any]:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    site = Site(tmp_path)
    site.new("waits")
    site.run_to_gate("waits")
    client = TestClient(create_app(Project(site.root), TOKEN))
    client.cookies.set("specd_ui", TOKEN)
    return site, client


def _state(site: Site, task: str = "waits") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((site.root / ".specd" / "tasks" / task / ".pipeline-state.json").read_text())
    return data


def test_reject_without_a_note_is_refused_and_approve_records_the_note(fresh_site: tuple[Site, Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    site, client = fresh_site
    monkeypatch.setenv("USER", "page-runner")  # the OS user the server runs as: all the page knows of anyone
    refused = client.post("/tasks/waits/reject", data={"csrf": csrf(), "note": "  "})
    assert refused.status_code == 400
    assert "reject needs a note saying what to change" in refused.text
    assert _state(site)["status"] == "WAITING_FOR_HUMAN"
    done = client.post("/tasks/waits/approve", data={"csrf": csrf(), "note": "ship it"}, follow_redirects=False)
    assert done.status_code == 303
    state = _state(site)
    assert state["status"] == "IN_PROGRESS"
    assert state["checkpoints"][-1] | {"at": None} == {
        "at": None, "step": "s2", "pipeline": "main", "phase": None, "answer": "approve", "note": "ship it",
        "waiting": "gate", "via": "page", "by": "page-runner"}  # the row `specd approve --note` writes, from here
    page = client.get(done.headers["location"]).text
    assert "approve: recorded" in page
    assert "ship it" in page
    assert '<td class="who">page-runner via page</td>' in page
    again = client.post("/tasks/waits/approve", data={"csrf": csrf()})
    assert again.status_code == 400
    assert "was answered already (approve); no run has taken that answer up yet" in again.text
    finished = site.specd("continue", "waits")  # the answer moves the run, as after `specd approve`
    assert finished.returncode == 0, finished.stderr
    assert _state(site)["status"] == "COMPLETE"


def test_skip_cancel_and_rerun_from_the_page(fresh_site: tuple[Site, Any]) -> None:
    site, client = fresh_site
    assert client.post("/tasks/waits/skip", data={"csrf": csrf()}).status_code == 200
    assert _state(site)["checkpoints"][-1]["answer"] == "skip"
    assert client.post("/tasks/waits/cancel", data={"csrf": csrf()}).status_code == 200
    assert _state(site)["status"] == "CANCELLED"
    assert client.post("/tasks/waits/rerun", data={"csrf": csrf(), "step": "nope"}).status_code == 400
    assert client.post("/tasks/waits/rerun", data={"csrf": csrf(), "step": "s1"}).status_code == 200
    state = _state(site)
    assert state["status"] == "IN_PROGRESS"
    assert (state["checkpoints"][-1]["answer"], state["checkpoints"][-1]["via"]) == ("rerun", "page")
    retry = client.post("/tasks/waits/retry", data={"csrf": csrf()})
    assert retry.status_code == 400
    assert "has not failed" in retry.text


def test_every_wait_a_run_can_hold_is_said_in_words_on_the_page() -> None:
    """A held wait of any kind (and a phase loop with no phases) reads as words in the list, never a bare kind."""
    from specd.engine.waiting import HELD
    from specd.web.rows import display

    for kind in (*HELD, "no_phases"):
        row = display({"task": "t", "status": "WAITING_FOR_HUMAN", "waiting": {"kind": kind, "step": "execute"}})
        assert row["waits"].endswith(" before execute"), row["waits"]
        assert row["waits"].split(" before ")[0] != kind, row["waits"]  # words, not the bare kind
