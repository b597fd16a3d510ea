"""Issue 32: one outcome contract, run against every backend in ``contract.BACKENDS``, through the real CLI.

Each backend runs with its real CLI or SDK against a local fake of its API (``tests/agents/contract/``);
the tests script the model with neutral actions and assert on specd's records and the fake's requests:

- a two-step task completes, a file tool and a shell tool doing the work;
- a review that reports approve while its verdict file says revise goes to revise (the file wins);
- a typed output is carried, validated, and an invalid one is given back once;
- cost and tokens are recorded per step as the API reported them, and a cost cap stops the run;
- an inline hook resumes its step's session where the backend can, and never leaks into the next step;
- a write to ``.specd/pipeline.json``, by the file tool or a command, never sticks.

The jail inventory of the same backends lives in ``test_backend_inventory.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from contract import BACKENDS
from contract.base import Finish, Shell, Write
from contract.project import Project

TWO_STEPS = [{"name": "build", "workflow": "build.md"}, {"name": "check", "workflow": "check.md"}]


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    harness = BACKENDS[request.param]()
    harness.require()
    harness.start(tmp_path)
    try:
        yield harness
    finally:
        harness.stop()


@pytest.fixture
def project(backend: Any, tmp_path: Path) -> Project:
    return Project(tmp_path / "proj", backend)


def test_a_two_step_task_completes(backend: Any, project: Project) -> None:
    project.pipeline(TWO_STEPS)
    backend.script([[Write("NOTES.md", "main returns 1\n"), Finish("done", "built")],
                    [Shell("cat NOTES.md"), Finish("done", "checked")]])

    run = project.cont()

    assert run.returncode == 0, run.stdout + run.stderr
    assert project.status()["status"] == "COMPLETE"
    assert [(r["step"], r["outcome"], r["summary"]) for r in project.history()] == [
        ("build", "done", "built"), ("check", "done", "checked")]
    assert (project.root / "NOTES.md").read_text() == "main returns 1\n"
    bodies = backend.requests()
    assert len(bodies) == 4
    assert "specd step: build" in backend.text(bodies[0])
    assert "specd step: check" in backend.text(bodies[2])
    assert "main returns 1" in backend.text(bodies[3])  # the command's output went back to the model


def test_the_verdict_file_wins_over_a_reported_approve(backend: Any, project: Project) -> None:
    project.pipeline([{"name": "review", "workflow": "review.md", "outcomes": {"revise": "fix", "approve": "end"}},
                      {"name": "fix", "workflow": "fix.md", "outcomes": {"done": "end"}}])
    verdict = "# Review\n\n1. main returns 1, not 2\n\nVerdict: revise\n"
    backend.script([[Write(".specd/tasks/t/REVIEW.md", verdict), Finish("approve", "looks fine")],
                    [Finish("done", "fixed")]])

    run = project.cont()

    assert run.returncode == 0, run.stdout + run.stderr
    assert project.steps() == [("review", "revise"), ("fix", "done")]
    assert "Traceback" not in run.stderr
