"""The gemini backend, driving the real Gemini CLI against the fake Gemini API, one step at a time.

Each test runs `gemini -p` for real (a few seconds each); the fake server scripts what "the model" answers
and logs what the CLI sent. The CLI runs in specd's jail where bubblewrap works, reaching the fake through
specd's proxy, which is also how these tests know it reached nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_gemini as fake
import pytest
from gemini_cli import DUMMY_KEY, events_of, gemini_binary, gemini_env, prompt_text

from specd.agents.base import AgentContext, AgentFailed, Budget, BudgetExhausted, Usage
from specd.agents.gemini import make_gemini
from specd.events import Event, EventBus
from specd.system import jail, proxy
from specd.system.netlist import api_hosts


@pytest.fixture
def gserver() -> Iterator[fake.FakeGemini]:
    with fake.FakeGemini() as srv:
        yield srv


@pytest.fixture
def gm(gserver: fake.FakeGemini, events: list[Event], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The gemini backend around the real Gemini CLI, pointed at the fake Gemini API."""
    env = gemini_env({}, url=gserver.url, home=tmp_path / "home", binary=gemini_binary())
    for name in ("GEMINI_CLI_HOME", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GEMINI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return make_gemini("gemini-2.5-pro", {}, AgentContext(human=None, events=EventBus(events.append)))  # type: ignore[arg-type]


def only_the_fake(server: fake.FakeGemini) -> None:
    """Nothing but the fake API was asked for: no other path on it, and (in the jail) no other host."""
    assert server.unknown == []
    if jail.active():
        rules = api_hosts("agent", "gemini", {"GOOGLE_GEMINI_BASE_URL": server.url})
        assert proxy.denied(rules) == []


def test_a_step_writes_with_geminis_tools_and_reports_its_outcome(gm: Any, project: Any,
                                                                   gserver: fake.FakeGemini) -> None:
    target = project.root / "src" / "new.py"
    gserver.push(fake.reply("Writing it.", fake.call("write_file", file_path=str(target), content="X = 1\n"),
                            prompt_tokens=2000, output_tokens=50, cached_tokens=500),
                 fake.outcome("approve", "wrote src/new.py", prompt_tokens=3000, output_tokens=40))
    result = gm.run(project.request())
    assert (result.outcome, result.summary, result.reported) == ("approve", "wrote src/new.py", True)
    assert target.read_text() == "X = 1\n"
    # The two turns' tokens, the cached part apart, priced from the table (gemini-2.5-pro).
    assert result.usage == Usage(4500, 90, 0, 500, round((4500 * 1.25 + 500 * 0.125 + 90 * 10) / 1e6, 6))
    [first] = gserver.turns[:1]
    text = prompt_text(first)
    assert "exactly one JSON object" in text
    assert '"enum": ["approve", "revise", "done"]' in text
    assert events_of(result.transcript, "tool_use")[0]["tool_name"] == "write_file"
    only_the_fake(gserver)


def test_the_cli_runs_in_the_tasks_own_config_folder(gm: Any, project: Any, gserver: fake.FakeGemini,
                                                     tmp_path: Path) -> None:
    gserver.push(fake.reply(fake.call("run_shell_command", command="echo hi")), fake.outcome("done"))
    gm.run(project.request())
    assert list((project.task_dir / "transcripts" / ".agent" / "gemini" / "tmp").iterdir()) == []  # removed
    folder = project.task_dir / "transcripts" / ".agent" / "gemini" / ".gemini"
    settings = json.loads((folder / "settings.json").read_text())
    assert settings["tools"]["sandbox"] is False
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert list(folder.rglob("session-*")), "the CLI kept its session in the task's folder"
    assert not (tmp_path / "home" / ".gemini").exists()  # never the user's ~/.gemini
    assert gserver.requests[0]["headers"]["x-goog-api-key"] == DUMMY_KEY


@pytest.mark.skipif(not jail.active(), reason="the key guard is part of the jail (bubblewrap)")
def test_the_gemini_clis_own_key_never_reaches_its_commands(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    """As the model: the CLI's shell inherits its environment, so `env` (or its parent's /proc/PID/environ) gave the
    model the API key. In the jail the CLI now signs with a stand-in, and specd's key guard puts the key in."""
    look = "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; true"
    gserver.push(fake.reply(fake.call("run_shell_command", command=look)), fake.outcome("done"))
    gm.run(project.request())
    said = json.dumps(fake.function_responses(gserver.turns[-1]))
    assert "GEMINI_API_KEY=specd-stand-in-" in said  # the command ran, and saw the stand-in
    assert DUMMY_KEY not in said
    assert len(gserver.requests) >= 2
    assert {r["headers"]["x-goog-api-key"] for r in gserver.requests if "x-goog-api-key" in r["headers"]} == {
        DUMMY_KEY}


def test_an_answer_that_is_not_the_json_outcome_is_asked_again_in_the_same_session(
        gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply("I think it is fine."), fake.outcome("revise", "needs work"))
    result = gm.run(project.request())
    assert (result.outcome, result.reported) == ("revise", True)
    again = prompt_text(gserver.turns[-1])
    assert "I think it is fine." in json.dumps(gserver.turns[-1]["contents"])  # the same session, resumed
    assert "held no JSON object" in again
    assert result.usage.input_tokens == 2000  # both invocations counted


def test_no_outcome_after_the_second_ask_is_left_to_the_verdict_file(gm: Any, project: Any,
                                                                     gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply("Done."), fake.reply('{"outcome": "maybe"}'))
    result = gm.run(project.request())
    assert (result.outcome, result.reported) == ("done", False)  # dispatch reads REVIEW.md's Verdict line


def test_typed_output_comes_from_the_final_object(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    schema = {"type": "object", "required": ["files"], "properties": {"files": {"type": "array"}}}
    gserver.push(fake.reply("```json\n" + json.dumps({"outcome": "done", "summary": "listed",
                                                      "output": {"files": ["a.py"]}}) + "\n```"))
    result = gm.run(project.request(output_schema=schema, outcomes=("done",)))
    assert result.data["output"] == {"files": ["a.py"]}
    assert '"files"' in prompt_text(gserver.turns[0])


def test_an_inline_hook_resumes_the_steps_session_and_a_subagent_hook_starts_fresh(
        gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply('PELICAN-42 {"outcome": "approve", "summary": "ok"}'))
    step = gm.run(project.request(conversation="main.review.-.v1"))
    gserver.push(fake.outcome("done"))
    hook = gm.run(project.request(kind="hook", conversation="main.review.-.v1", outcomes=("done",),
                                  prompt="# Inline hook\nCheck it."))
    assert "PELICAN-42" in json.dumps(gserver.turns[-1]["contents"])
    assert hook.data["session_id"] == step.data["session_id"]
    gserver.push(fake.outcome("done"))
    sub = gm.run(project.request(kind="hook", conversation="main.review.-.v1.post", outcomes=("done",),
                                 prompt="# Subagent hook\nLook again."))
    assert "PELICAN-42" not in json.dumps(gserver.turns[-1]["contents"])
    assert sub.data["session_id"] != step.data["session_id"]


def test_max_turns_fails_the_step_with_a_one_line_reason(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply(fake.call("run_shell_command", command="echo hi")), fake.outcome("done"))
    with pytest.raises(AgentFailed) as caught:
        gm.run(project.request(max_turns=1))
    assert "turn limit" in caught.value.reason
    assert "max_turns" in caught.value.reason
    assert caught.value.usage.input_tokens == 1000  # what was spent is still recorded


def test_an_api_error_is_one_readable_line(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    gserver.push(fake.error(400))
    with pytest.raises(AgentFailed) as caught:
        gm.run(project.request())
    assert caught.value.reason.startswith("the Gemini CLI failed (")
    assert "scripted failure" in caught.value.reason
    assert "\n" not in caught.value.reason


def test_an_exhausted_budget_is_refused_before_gemini_starts(gm: Any, project: Any,
                                                             gserver: fake.FakeGemini) -> None:
    with pytest.raises(BudgetExhausted, match="run cost budget reached"):
        gm.run(project.request(budget=Budget(max_cost_usd=1.0, run_spent=Usage(cost_usd=1.0))))
    assert gserver.requests == []


@pytest.mark.skipif(not jail.active(), reason="the jail is bubblewrap; without it the check after the step acts")
def test_in_the_jail_gemini_cannot_write_specds_machinery(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    pipeline = project.root / ".specd" / "pipeline.json"
    pipeline.write_text('{"keep": true}')
    gserver.push(fake.reply(fake.call("write_file", file_path=str(pipeline), content='{"hooks": "pwned"}')),
                 fake.outcome("approve"))
    with pytest.raises(AgentFailed) as caught:
        gm.run(project.request())
    assert pipeline.read_text() == '{"keep": true}'
    assert "write_file (.specd/pipeline.json)" in caught.value.reason
    [result] = fake.function_responses(gserver.turns[-1])
    assert "error" in json.dumps(result).lower()


def test_the_transcript_is_redacted(gm: Any, project: Any, gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply(f'The key is {DUMMY_KEY}. {{"outcome": "approve", "summary": "ok"}}'))
    result = gm.run(project.request())
    text = result.transcript.read_text()
    assert DUMMY_KEY not in text
    assert "[REDACTED]" in text


def test_a_spent_budget_is_not_spent_again_asking_for_the_outcome(gm: Any, project: Any,
                                                                  gserver: fake.FakeGemini) -> None:
    gserver.push(fake.reply("All good.", prompt_tokens=1_000_000))  # $2.50: gemini-2.5-pro past 200k tokens
    result = gm.run(project.request(budget=Budget(max_cost_usd=1.0)))
    assert (result.outcome, result.reported) == ("done", False)  # left to the verdict file; the run stops next
    assert len(gserver.turns) == 1
    assert result.usage.cost_usd == pytest.approx(2.5 + 100 * 15 / 1e6)


def test_outside_the_jail_the_cli_still_keeps_to_the_tasks_config_folder(gm: Any, project: Any,
                                                                         gserver: fake.FakeGemini,
                                                                         tmp_path: Path) -> None:
    gserver.push(fake.outcome("approve"))
    result = gm.run(project.request(settings={"sandbox": False}))
    assert result.outcome == "approve"
    assert list((project.task_dir / "transcripts" / ".agent" / "gemini" / ".gemini").rglob("session-*"))
    assert not (tmp_path / "home" / ".gemini").exists()  # HOME is the user's here: its ~/.gemini stays untouched
