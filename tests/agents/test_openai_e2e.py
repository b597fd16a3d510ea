"""`backend: openai` through the real CLI and the real ``openai`` SDK, against a local fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_app import KEY, KEY_ENV, App, fake, tool_result

PRICE = {"input": 2.0, "output": 8.0, "cache_read": 0.5}


@pytest.fixture
def app(tmp_path: Path, openai_server: Any) -> App:
    return App(tmp_path / "proj", openai_server)


def test_a_two_step_task_completes_with_the_tools_on_a_local_server_without_a_key(app: App) -> None:
    app.two_steps()
    app.new()
    app.server.push(fake.message(fake.call("read_file", path="src/app.py"), text="Reading first."),
                    fake.message(fake.call("write_file", path="NOTES.md", content="main returns 1")),
                    fake.complete("done", "built"),
                    fake.complete("done", "checked"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert app.status()["status"] == "COMPLETE"
    assert [(row["step"], row["outcome"], row["summary"]) for row in app.history()] == [
        ("build", "done", "built"), ("check", "done", "checked")]
    assert (app.root / "NOTES.md").read_text() == "main returns 1"
    first, second = app.server.bodies[:2]
    assert first["model"] == "local-coder"
    assert first["messages"][0]["role"] == "system"
    assert "Step: build" in json.dumps(first["messages"][1:])
    complete = next(t["function"] for t in first["tools"] if t["function"]["name"] == "complete_step")
    assert complete["parameters"]["properties"]["outcome"]["enum"] == ["done"]  # the step's outcomes, no others
    assert "def main():" in tool_result(second)  # the read_file result went back as a tool message
    assert KEY not in json.dumps(app.server.requests)  # no api_key_env set: the default key's variable is unset


def test_the_key_named_by_api_key_env_is_sent_and_never_written(app: App) -> None:
    app.two_steps(api_key_env=KEY_ENV)
    app.new()
    app.server.push(fake.complete("done", "built"), fake.complete("done", "checked"))
    assert app.cont().returncode == 0
    assert {r["headers"]["authorization"] for r in app.server.requests} == {f"Bearer {KEY}"}
    app.no_key_on_disk()


def test_agent_openai_with_a_model_on_the_command_line(app: App) -> None:
    app.two_steps()
    app.new()
    app.server.push(fake.complete("done", "built"), fake.complete("done", "checked"))
    run = app.cont("--agent", "openai:other-model")
    assert run.returncode == 0, run.stdout + run.stderr
    assert {body["model"] for body in app.server.bodies} == {"other-model"}


def test_cost_and_tokens_are_recorded_per_step_from_the_reported_usage(app: App) -> None:
    app.two_steps(price_per_mtok=PRICE)
    app.new()
    app.server.push(fake.message(fake.call("read_file", path="src/app.py")), fake.complete("done", "built"),
                    fake.complete("done", "checked"))
    assert app.cont().returncode == 0
    usages = app.server.usages
    assert usages[1]["prompt_tokens_details"]["cached_tokens"] > 0  # the second turn resent the first's prefix
    for row, calls in zip(app.history(), [usages[0:2], usages[2:3]], strict=True):
        cached = sum(c["prompt_tokens_details"]["cached_tokens"] for c in calls)
        fresh = sum(c["prompt_tokens"] for c in calls) - cached
        out = sum(c["completion_tokens"] for c in calls)
        assert row["usage"]["input_tokens"] == fresh
        assert row["usage"]["cache_read_input_tokens"] == cached
        assert row["usage"]["output_tokens"] == out
        assert row["usage"]["cost_usd"] == pytest.approx((fresh * 2 + cached * 0.5 + out * 8) / 1e6, abs=1e-6)
    assert app.status()["usage"]["cost_usd"] > 0


def test_a_cost_cap_stops_the_run_before_the_call_that_would_pass_it(app: App) -> None:
    app.two_steps(price_per_mtok={"input": 100.0, "output": 100.0})
    app.new()
    app.server.push(fake.message(fake.call("read_file", path="src/app.py")),
                    fake.message(fake.call("read_file", path="src/app.py", offset=2)),
                    fake.complete("done", "built"), fake.complete("done", "checked"))
    stopped = app.cont("--max-cost", "0.4")
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    status = app.status()
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert "budget would be passed" in status["reason"]
    assert 0 < len(app.server.requests) < 4  # some calls were made, then one was refused before it was sent
    assert 0 < status["usage"]["cost_usd"] <= 0.4

    resumed = app.cont("--max-cost", "100")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert app.status()["status"] == "COMPLETE"


def test_a_model_without_a_price_is_refused_for_a_budgeted_run(app: App) -> None:
    app.two_steps()
    app.new()
    refused = app.cont("--max-cost", "5")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    assert "no price is known for model 'local-coder'" in said
    assert "price_per_mtok" in said
    assert app.server.requests == []


def test_a_step_on_another_model_does_not_take_the_agent_block_price(app: App) -> None:
    app.pipeline([{"name": "build", "workflow": "build.md"},
                  {"name": "check", "workflow": "check.md", "model": "unpriced-step-model"}], price_per_mtok=PRICE)
    app.new()
    app.server.push(fake.complete("done", "built"))
    refused = app.cont("--max-cost", "5")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "no price is known for model 'unpriced-step-model'" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    assert [body["model"] for body in app.server.bodies] == ["local-coder"]  # build ran; check made no call


def test_an_unbudgeted_run_on_an_unpriced_model_counts_tokens_and_no_cost(app: App) -> None:
    app.two_steps()
    app.new()
    app.server.push(fake.complete("done", "built"), fake.complete("done", "checked"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert (run.stdout + run.stderr).count("no price known for model local-coder") == 1  # once, not per step
    for row in app.history():
        assert row["usage"]["input_tokens"] > 0
        assert row["usage"]["cost_usd"] == 0


def test_a_write_to_the_pipeline_file_is_refused_and_the_model_is_told(app: App) -> None:
    app.two_steps()
    app.new()
    before = (app.root / ".specd" / "pipeline.json").read_text()
    app.server.push(fake.message(fake.call("write_file", path=".specd/pipeline.json", content="{}")),
                    fake.complete("done", "built"), fake.complete("done", "checked"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert (app.root / ".specd" / "pipeline.json").read_text() == before
    told = tool_result(app.server.bodies[1])
    assert told.startswith("[error] refused:")
    assert "writing refused" in told


def test_a_typed_output_is_asked_for_in_complete_step_and_reaches_the_next_step(app: App) -> None:
    output = {"type": "object", "required": ["files"],
              "properties": {"files": {"type": "array", "items": {"type": "string"}}}}
    app.pipeline([{"name": "plan", "workflow": "plan.md", "output": output},
                  {"name": "execute", "workflow": "execute.md"}])
    (app.root / ".specd" / "workflows" / "execute.md").write_text(
        "# Execute\n\nChange {{ steps.plan.output.files | join(', ') }}\n")
    app.new()
    app.server.push(fake.complete("done", "planned", output={"files": ["src/app.py"]}),
                    fake.complete("done", "executed"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    plan, execute = app.server.bodies
    complete = next(t["function"] for t in plan["tools"] if t["function"]["name"] == "complete_step")
    assert complete["parameters"]["properties"]["output"]["properties"] == output["properties"]
    assert "output" in complete["parameters"]["required"]
    assert "Change src/app.py" in json.dumps(execute["messages"])
