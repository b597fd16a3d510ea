"""Which stopped tasks a starting control plane takes up (``executors.plane.take_up``): only those whose run another
plane started, read from the task's home record, whatever a hand edit left in it."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pytest
from executor_harness import TIMEOUT, Repo

from specd.executors.plane import take_up
from specd.tasks.project import Project

MINE = "4242 2026-11-29T12:00:00+00:00"


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """Task ``t``: its run killed mid-step (saved IN_PROGRESS, no process holds it)."""
    repo = Repo(tmp_path_factory.mktemp("take-up"), steps=("s1",))
    repo.new("t")
    (repo.dir / "hold-t-s1").write_text("")
    run = subprocess.Popen([*repo.specd_argv(), "continue", "t", "--auto", "--agent", repo.agent()], cwd=repo.root,
                           env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT
    while not (repo.root / "held-t-s1").exists():
        assert run.poll() is None, "the run ended before its agent started"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    run.kill()
    run.wait()
    (repo.dir / "hold-t-s1").unlink()
    return repo


def _taken(repo: Repo, plane: Any) -> tuple[list[str], list[str]]:
    record = repo.root / ".specd" / "homes" / "t.json"
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "plane": plane}))
    said: list[str] = []
    project = Project(repo.root)
    found = take_up(project, {"t": project.tasks_dir / "t"}, MINE, lambda task, event: said.append(event["message"]))
    return found, said


def test_a_terminals_run_is_left_for_a_person(stopped: Repo) -> None:
    record = json.loads((stopped.root / ".specd" / "homes" / "t.json").read_text())
    assert record["plane"] == ""  # `specd continue` in a terminal: no plane started it
    assert _taken(stopped, "") == ([], [])


def test_another_planes_run_is_taken_up_and_said(stopped: Repo) -> None:
    found, said = _taken(stopped, "999 2026-11-29T11:00:00+00:00")
    assert found == ["t"]
    assert said == ["goes on: the control plane that ran it (pid 999) stopped without saving its end"]


@pytest.mark.parametrize("plane", [MINE, "   ", 123, ["999", "then"]],
                         ids=["this plane's own", "blank", "a number", "a list"])
def test_nothing_else_is_taken_up_and_nothing_breaks(stopped: Repo, plane: Any) -> None:
    assert _taken(stopped, plane) == ([], [])


def test_a_task_that_is_not_stopped_is_left_alone(stopped: Repo) -> None:
    state = stopped.root / ".specd" / "tasks" / "t" / ".pipeline-state.json"
    kept = state.read_text()
    try:
        state.write_text(kept.replace('"IN_PROGRESS"', '"CANCELLED"'))
        assert _taken(stopped, "999 2026-11-29T11:00:00+00:00") == ([], [])
    finally:
        state.write_text(kept)
