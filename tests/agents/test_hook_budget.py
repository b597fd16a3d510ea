"""A budget reached inside a markdown hook is a held budget wait, like one reached in a step.

Through the real CLI and the real anthropic client against the fake Messages API: the step fits the run's
cost budget, the post hook's prompt alone would pass it, so the agent refuses the call (BudgetExhausted).
The run exits 3, WAITING_FOR_HUMAN with a budget wait and no traceback; raising the budget with
`--max-cost` runs the hook (and only the hook) again, and the run completes.
"""

from __future__ import annotations

from typing import Any

import fake_anthropic as fake
from cli_app import App

# About 100,000 tokens of hook prompt: at the default model's input price that alone passes $0.10.
BIG_HOOK = "---\ndescription: check the work\n---\n\n# After work\n\n" + "Check every line of the work. " * 14_000


def test_budget_reached_in_a_markdown_hook_is_a_held_wait_that_max_cost_resumes(tmp_path: Any, server: Any) -> None:
    app = App(tmp_path / "proj", server)
    app.pipeline([{"name": "work", "workflow": "work.md"}], agent={"backend": "anthropic", "max_cost_usd": 0.1})
    (app.root / ".specd" / "hooks").mkdir()
    (app.root / ".specd" / "hooks" / "post-work.md").write_text(BIG_HOOK)
    app.new()
    server.push(fake.complete("done", "worked"))

    held = app.cont("anthropic")

    assert held.returncode == 3, held.stderr
    assert "Traceback" not in held.stderr
    state = app.state()
    assert state.status == "WAITING_FOR_HUMAN"
    assert state.waiting["kind"] == "budget"
    assert state.waiting["step"] == "work"
    assert "post hook post-work.md" in state.reason
    assert "run cost budget would be passed" in state.reason
    assert len(server.bodies) == 1  # the hook's call was never sent

    server.push(fake.complete("done", "checked"))
    resumed = app.cont("anthropic", "--max-cost", "5")

    assert resumed.returncode == 0, resumed.stderr
    assert app.state().status == "COMPLETE"
    assert len(server.bodies) == 2  # the hook ran; the finished step did not run again
    rows = [(row.get("kind"), row.get("step"), row.get("outcome")) for row in app.state().history]
    assert rows == [("step", "work", "done"), ("hook", "work", "done")]


def test_budget_wait_in_a_hook_is_answered_by_approve_after_raising_the_limit(tmp_path: Any, server: Any) -> None:
    app = App(tmp_path / "proj", server)
    app.pipeline([{"name": "work", "workflow": "work.md"}], agent={"backend": "anthropic", "max_cost_usd": 0.1})
    (app.root / ".specd" / "hooks").mkdir()
    (app.root / ".specd" / "hooks" / "pre-work.md").write_text(BIG_HOOK)  # before the step, this time
    app.new()

    held = app.cont("anthropic")

    assert held.returncode == 3, held.stderr
    assert app.state().waiting["kind"] == "budget"
    assert "pre hook pre-work.md" in app.state().reason
    assert server.bodies == []
    waiting = app.cont("anthropic")
    assert waiting.returncode == 3, waiting.stderr  # a held wait stays held until answered
    assert server.bodies == []

    app.pipeline([{"name": "work", "workflow": "work.md"}], agent={"backend": "anthropic", "max_cost_usd": 5})
    assert app.specd("approve", "t").returncode == 0
    server.push(fake.complete("done", "checked"), fake.complete("done", "worked"))
    resumed = app.cont("anthropic")

    assert resumed.returncode == 0, resumed.stderr
    rows = [(row.get("kind"), row.get("step"), row.get("outcome")) for row in app.state().history]
    assert rows == [("hook", "work", "done"), ("step", "work", "done")]
