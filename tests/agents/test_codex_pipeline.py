"""The codex backend through the real `specd` CLI: Codex run for each step against the fake Responses API.

A task of two steps completes with its cost and tokens per step; a run cost cap stops the run after the
step that reached it; an inline post hook continues its step's Codex thread; and what is wrong before a
run (no CLI, no key, a cost cap over an unpriced model) is a clear exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import fake_codex as fake
import pytest
from cli_app import App
from codex_cli import MODEL, agent_block, codex_binary, codex_env

TWO = [{"name": "build", "workflow": "build.md"}, {"name": "check", "workflow": "check.md"}]


@pytest.fixture
def api() -> Iterator[fake.FakeCodexAPI]:
    with fake.FakeCodexAPI() as server:
        yield server


@pytest.fixture
def app(tmp_path: Path) -> App:
    made = App(tmp_path / "proj")
    made.env = codex_env(made.env, home=tmp_path / "home", binary=codex_binary())
    return made


def test_two_steps_complete_with_cost_and_tokens_per_step_on_agent_codex_model(app: App,
                                                                                api: fake.FakeCodexAPI) -> None:
    app.env["OPENAI_BASE_URL"] = api.base_url  # no agent block: the server comes from the environment
    app.pipeline(TWO)
    app.new()
    api.push(fake.reply(fake.shell("echo 'main returns 1' > NOTES.md")), fake.final("done", "built"),
             fake.reply(fake.shell("cat NOTES.md")), fake.final("done", "checked"))

    run = app.cont(f"codex:{MODEL}")

    assert run.returncode == 0, run.stdout + run.stderr
    assert app.steps() == [("build", "done"), ("check", "done")]
    assert (app.root / "NOTES.md").read_text() == "main returns 1\n"
    assert {body["model"] for body in api.bodies} == {MODEL}
    assert "a final message that is only the JSON object the output schema asks for" in fake.user_text(
        api.bodies[0])  # the prompt's header says how Codex reports
    assert "main returns 1" in fake.outputs(api.bodies[3])[0]
    rows = [row for row in app.state().history if row.get("kind", "step") == "step"]
    for row, reported in zip(rows, (api.usages[:2], api.usages[2:]), strict=True):
        usage = row["usage"]
        cached = sum(u["input_tokens_details"]["cached_tokens"] for u in reported)
        assert usage["input_tokens"] + usage["cache_read_input_tokens"] == sum(u["input_tokens"] for u in reported)
        assert usage["cache_read_input_tokens"] == cached
        assert usage["output_tokens"] == sum(u["output_tokens"] for u in reported)
        assert usage["cost_usd"] > 0


def test_a_run_cost_cap_stops_the_run_after_the_step_that_reached_it(app: App, api: fake.FakeCodexAPI) -> None:
    app.pipeline(TWO, agent=agent_block(api.base_url, max_cost_usd=0.001))
    app.new()
    api.push(fake.final("done", "built"))

    held = app.cont("codex")

    assert held.returncode == 3, held.stdout + held.stderr
    assert "Traceback" not in held.stderr
    state = app.state()
    assert state.status == "WAITING_FOR_HUMAN"
    assert "run cost budget reached" in state.reason
    assert app.steps() == [("build", "done")]
    assert len(api.bodies) == 1  # the second step never reached the API
    assert state.history[0]["usage"]["cost_usd"] > 0.001


def test_an_inline_hook_continues_the_steps_codex_thread(app: App, api: fake.FakeCodexAPI) -> None:
    hook = {"workflow": ".specd/hooks/after.md", "mode": "inline"}
    app.pipeline([{"name": "build", "workflow": "build.md", "hooks": {"post": hook}}],
                 agent=agent_block(api.base_url))
    (app.root / ".specd" / "hooks").mkdir()
    (app.root / ".specd" / "hooks" / "after.md").write_text("# After\n\nSay what the codeword was.\n")
    app.new()
    api.push(fake.final("done", "built", said="The codeword is PELICAN-42."), fake.final("done", "recalled"))

    run = app.cont("codex")

    assert run.returncode == 0, run.stdout + run.stderr
    hook_body = api.bodies[-1]
    assert "PELICAN-42" in json.dumps(hook_body["input"])
    assert "Say what the codeword was." in fake.user_text(hook_body)
    rows = [(row.get("kind"), row.get("outcome")) for row in app.state().history]
    assert rows == [("step", "done"), ("hook", "done")]


@pytest.mark.parametrize(("change", "said"), [
    ({"SPECD_CODEX_BIN": "/nowhere/codex"}, "SPECD_CODEX_BIN=/nowhere/codex is not an executable file"),
    ({"OPENAI_API_KEY": ""}, "the codex agent needs OPENAI_API_KEY in the environment"),
])
def test_what_is_missing_before_a_run_is_a_clear_exit_2(app: App, change: dict[str, str], said: str) -> None:
    app.pipeline(TWO, agent={"backend": "codex", "model": MODEL})  # OpenAI's own API: a key is needed
    app.new()
    app.env.update(change)
    run = app.cont("codex")
    assert run.returncode == 2, run.stdout + run.stderr
    assert said in run.stderr
    assert "fix:" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_cost_cap_over_an_unpriced_model_is_refused_before_the_run(app: App, api: fake.FakeCodexAPI) -> None:
    app.pipeline(TWO, agent=agent_block(api.base_url, model="my-local-coder", max_cost_usd=1))
    app.new()
    run = app.cont("codex")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no price is known for 'my-local-coder'" in run.stderr
    assert api.requests == []
