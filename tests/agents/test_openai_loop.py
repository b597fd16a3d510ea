"""The openai backend's loop through the real CLI: the SDK's retries, a failure saved and resumed,
repeated reads, and the configuration errors that stop a run before any call (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_app import App, fake, tool_result


@pytest.fixture
def app(tmp_path: Path, openai_server: Any) -> App:
    return App(tmp_path / "proj", openai_server)


def test_server_errors_are_retried_by_the_sdk(app: App) -> None:
    app.two_steps()
    app.new()
    app.server.push(fake.error(500), fake.error(503), fake.complete("done", "built"), fake.complete("done", "ok"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(app.server.requests) == 4
    assert app.server.bodies[0] == app.server.bodies[2]  # the same call, sent again


def test_a_failure_past_the_retries_blocks_and_continue_resumes_the_saved_conversation(app: App) -> None:
    app.two_steps(max_retries=1)
    app.new()
    app.server.push(fake.message(fake.call("read_file", path="src/app.py")), fake.error(500), fake.error(500))
    blocked = app.cont()
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert app.status()["status"] == "BLOCKED"
    assert "OpenAI-compatible API" in blocked.stdout + blocked.stderr
    assert len(app.server.requests) == 3  # the first attempt and one retry of the second call

    app.server.push(fake.complete("done", "built"), fake.complete("done", "checked"))
    resumed = app.cont()
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    first_after = app.server.bodies[3]
    assert "def main():" in json.dumps(first_after["messages"])  # the saved read_file result came back
    assert "resumed" in first_after["messages"][-1]["content"]


def test_a_repeated_read_gets_a_pointer_instead_of_a_second_copy(app: App) -> None:
    (app.root / "src" / "big.py").write_text("x = 1\n" * 100)
    app.two_steps()
    app.new()
    read = {"path": "src/big.py"}
    app.server.push(fake.message(fake.call("read_file", **read)), fake.message(fake.call("read_file", **read)),
                    fake.complete("done", "built"), fake.complete("done", "checked"))
    assert app.cont().returncode == 0
    assert tool_result(app.server.bodies[1]).startswith("x = 1")
    assert tool_result(app.server.bodies[2]).startswith("Unchanged: the same result as your read_file call")


def test_a_server_that_reports_no_usage_is_counted_by_estimate_and_still_held_to_the_cap(app: App) -> None:
    app.two_steps(price_per_mtok={"input": 100.0, "output": 100.0})
    app.new()
    silent = [fake.message(fake.call("read_file", path="src/app.py")) for _ in range(3)]
    for reply in silent:
        reply.usage = False
    app.server.push(*silent)
    stopped = app.cont("--max-cost", "0.5")
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert "reports no token usage" in stopped.stdout + stopped.stderr
    status = app.status()
    assert "budget" in status["reason"]
    assert 0 < status["usage"]["cost_usd"] <= 0.5
    assert status["usage"]["input_tokens"] > 0


@pytest.mark.parametrize(("agent", "said"), [
    ({"model": None}, "the openai agent needs a model"),
    ({"base_url": None}, "the openai agent needs OPENAI_API_KEY in the environment"),
    ({"price_per_mtok": {"input": 1}}, "price_per_mtok"),
])
def test_a_bad_agent_block_stops_before_any_call_with_exit_2(app: App, agent: dict[str, Any], said: str) -> None:
    app.two_steps()
    pipeline = json.loads((app.root / ".specd" / "pipeline.json").read_text())
    for key, value in agent.items():
        if value is None:
            del pipeline["agent"][key]
        else:
            pipeline["agent"][key] = value
    (app.root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    app.new()
    run = app.cont()
    assert run.returncode == 2, run.stdout + run.stderr
    assert said in run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert app.server.requests == []
