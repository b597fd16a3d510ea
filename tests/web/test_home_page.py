"""The page answers a task's one copy, wherever its home record says it lives (DESIGN.md "One home per task")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from web_harness import SECRET_NAME, TOKEN, Site, csrf


def _client(site: Site) -> Any:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    client = TestClient(create_app(Project(site.root), TOKEN))
    client.cookies.set("specd_ui", TOKEN)
    return client


def test_the_page_answers_the_copy_in_the_worktree(tmp_path: Path, secret_env: None) -> None:
    site = Site(tmp_path)
    site.env.pop(SECRET_NAME)  # nothing to hold for a secret: the run stops only at s2's gate
    site.new("away")
    started = site.specd("run", "away", "--semi-auto", "--agent", site.agent())
    assert started.returncode == 3, started.stdout + started.stderr
    client = _client(site)
    done = client.post("/tasks/away/approve", data={"csrf": csrf(), "note": "from the page"},
                       follow_redirects=False)
    assert done.status_code == 303
    live = site.tree("away") / ".specd" / "tasks" / "away" / ".pipeline-state.json"
    assert json.loads(live.read_text())["checkpoints"][-1]["note"] == "from the page"
    assert not (site.root / ".specd" / "tasks" / "away" / ".pipeline-state.json").exists()  # no second copy
    finished = site.specd("continue", "away")  # run where it lives, with the page's answer
    assert finished.returncode == 0, finished.stderr
    assert json.loads(live.read_text())["status"] == "COMPLETE"


def test_a_task_in_two_places_is_refused_on_the_page_naming_both(tmp_path: Path, secret_env: None) -> None:
    site = Site(tmp_path)
    site.new("twice")
    site.run_to_gate("twice")
    (site.root / ".specd" / "homes" / "twice.json").unlink()  # as before homes were recorded
    site.git("worktree", "add", "-q", "-b", "specd/twice", ".specd/worktrees/twice", "HEAD")
    assert (site.tree("twice") / ".specd" / "tasks" / "twice" / "config.json").is_file()  # committed by its step
    client = _client(site)
    refused = client.post("/tasks/twice/approve", data={"csrf": csrf()})
    assert refused.status_code == 409
    assert ".specd/tasks/twice/.pipeline-state.json" in refused.text
    assert ".specd/worktrees/twice" in refused.text
    assert client.get("/tasks/twice").status_code == 409
