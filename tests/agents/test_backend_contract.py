"""Issue 32: one outcome contract, run against every backend in ``contract.BACKENDS``, through the real CLI.

Each backend runs with its real CLI or SDK against a local fake of its API (``tests/agents/contract/``);
the tests script the model with neutral actions and assert on specd's records and the fake's requests:

- a two-step task completes, a file tool and a shell tool doing the work;
- a review that reports approve while its verdict file says revise goes to revise (the file wins);
- a typed output is carried, validated, and an invalid one is given back once;
- cost and tokens are recorded per step as the API reported them (in the two-step task), and a cost cap
  stops the run, which goes on once the cap is raised;
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

from specd.agents.factory import backend_of
from specd.agents.needs import NEEDS

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
    # Tokens per step are what the API reported for that step's requests; each step has a cost of its own.
    usages = backend.usages()
    assert len(usages) == 4
    for row, calls in zip(project.history(), [usages[:2], usages[2:]], strict=True):
        for field in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            assert row["usage"].get(field, 0) == sum(getattr(call, field) for call in calls), (row["step"], field)
        assert row["usage"]["cost_usd"] > 0
    assert project.status()["usage"]["cost_usd"] == pytest.approx(
        sum(row["usage"]["cost_usd"] for row in project.history()), abs=1e-6)


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


def test_a_cost_cap_stops_the_run_and_a_higher_one_lets_it_finish(backend: Any, project: Project) -> None:
    project.pipeline(TWO_STEPS)
    backend.script([[Finish("done", "built")], [Finish("done", "checked")]])

    stopped = project.cont("--max-cost", "0.000001")

    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    status = project.status()
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert "budget" in status["reason"]
    assert "check" not in [row["step"] for row in project.history()]  # nothing ran past the cap
    done = [row["step"] for row in project.history()]
    backend.script([[Finish("done", "built")]] * ("build" not in done) + [[Finish("done", "checked")]])

    resumed = project.cont("--max-cost", "100")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert project.status()["status"] == "COMPLETE"
    assert project.steps() == [("build", "done"), ("check", "done")]


HOOK = "---\ndescription: after build\n---\n\n# After build\n\nSay what the build step read.\n"


def test_an_inline_hook_resumes_the_steps_session_where_the_backend_can(backend: Any, project: Project) -> None:
    (project.root / ".specd" / "hooks").mkdir()
    (project.root / ".specd" / "hooks" / "post-build.md").write_text(HOOK)
    project.pipeline(TWO_STEPS)
    backend.script([[Shell("cat src/app.py"), Finish("done", "built")], [Finish("done", "hook said")],
                    [Finish("done", "checked")]])

    run = project.cont()

    assert run.returncode == 0, run.stdout + run.stderr
    assert project.steps() == [("build", "done"), ("check", "done")]
    hook, check = (backend.text(body) for body in backend.requests()[2:4])
    assert "Say what the build step read." in hook
    # The step's command output is in the hook's context only where the session was resumed.
    assert ("def main():" in hook) is backend.resumes_sessions
    assert "def main():" not in check  # the next step starts afresh
    assert "Say what the build step read." not in check


PLANTER = "from pathlib import Path\nPath('.specd/pipeline.json').write_text('{}')\n"


def test_a_write_to_the_pipeline_file_never_sticks(backend: Any, project: Project) -> None:
    project.pipeline(TWO_STEPS)
    before = (project.root / ".specd" / "pipeline.json").read_bytes()
    backend.script([[Write(".specd/pipeline.json", "{}"), Write("planter.py", PLANTER), Shell("python3 planter.py"),
                     Finish("done", "built")], [Finish("done", "checked")]])

    run = project.cont()

    assert (project.root / ".specd" / "pipeline.json").read_bytes() == before
    assert "Traceback" not in run.stderr
    assert len(backend.requests()) >= 4  # every attempt was played; a refusal went back to the model
    if run.returncode != 0:  # the jail was off, the command wrote it: undone after the step, which is BLOCKED
        status = project.status()
        assert status["status"] == "BLOCKED", run.stdout + run.stderr
        assert ".specd/pipeline.json" in status["reason"]
    else:  # refused at the time of the write (the file tool, the jail's read-only pipeline file)
        assert project.steps() == [("build", "done"), ("check", "done")]


PLAN = "# Plan\n\nList the files to change.\n"
EXECUTE = "# Execute\n\nChange these files: {{{{ steps.plan.output.files | join(', ') }}}}\n"
OUTPUT = {"type": "object", "required": ["files"],
          "properties": {"files": {"type": "array", "items": {"type": "string"}}}}


def test_a_typed_output_is_validated_given_back_once_and_carried(backend: Any, project: Project) -> None:
    project.pipeline([{"name": "plan", "workflow": "plan.md", "output": OUTPUT},
                      {"name": "execute", "workflow": "execute.md"}], {"plan": PLAN, "execute": EXECUTE})
    backend.script([[Finish("done", "planned", output={"files": "src/a.py"}),
                     Finish("done", "planned again", output={"files": ["src/a.py"]}),
                     Finish("done", "executed")]])

    run = project.cont()

    assert run.returncode == 0, run.stdout + run.stderr
    rows = project.history()
    assert [(r["step"], r["outcome"]) for r in rows] == [("plan", "done"), ("execute", "done")]
    assert rows[0]["output"] == {"files": ["src/a.py"]}
    bodies = backend.requests()
    assert len(bodies) == 3  # the invalid output went back once, in the plan's own conversation
    assert "specd step: plan" in backend.text(bodies[1])
    assert "Change these files: src/a.py" in backend.text(bodies[2])


def test_every_model_backend_specd_knows_is_in_the_suite() -> None:
    """A backend cannot be added without a harness here: every one that runs a model (doctor's table lists
    what each needs) and that ``--agent`` accepts must be in ``BACKENDS``."""
    models = {needs.backend for needs in NEEDS if (needs.cli or needs.sdk) and backend_of(needs.backend, {})}
    assert models <= set(BACKENDS), f"no contract harness for {sorted(models - set(BACKENDS))}"
