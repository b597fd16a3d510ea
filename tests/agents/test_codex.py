"""The codex backend, driving the real Codex CLI (``codex exec``) against the fake Responses API.

Each test runs Codex for real (about a second each) in specd's jail; the fake server scripts what "the
model" answers and logs what Codex sent.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_codex as fake
import pytest
from codex_cli import DUMMY_KEY, MODEL, codex_binary, codex_env, events_of

from specd.agents.base import AgentContext, AgentFailed, Budget, BudgetExhausted, Usage
from specd.agents.codex import make_codex
from specd.agents.openai.prices import BUILTIN
from specd.events import Event, EventBus
from specd.system.jail import active


@pytest.fixture
def api() -> Iterator[fake.FakeCodexAPI]:
    with fake.FakeCodexAPI() as server:
        yield server


@pytest.fixture
def codex(api: fake.FakeCodexAPI, events: list[Event], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    env = codex_env({}, home=tmp_path / "home", binary=codex_binary())
    for name in ("CODEX_HOME", "OPENAI_BASE_URL", "CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def build(**settings: Any) -> Any:
        block = {"model": MODEL, "base_url": api.base_url, **settings}
        return make_codex(None, block, AgentContext(human=None, events=EventBus(events.append)))  # type: ignore[arg-type]

    return build


def test_a_step_reports_its_outcome_usage_and_live_events(codex: Any, project: Any, api: fake.FakeCodexAPI,
                                                         events: list[Event]) -> None:
    api.push(fake.reply("Writing the notes.", fake.shell("echo hello > notes.txt && cat notes.txt")),
             fake.final("revise", "the tests are missing"))

    result = codex().run(project.request(outcomes=("approve", "revise")))

    assert (result.outcome, result.summary, result.reported) == ("revise", "the tests are missing", True)
    assert (project.root / "notes.txt").read_text() == "hello\n"  # Codex's own shell tool did the work
    first, second = api.bodies
    assert first["model"] == MODEL
    assert "Review the work" in fake.user_text(first)
    # specd's outcome schema reached the API as Codex's structured output format.
    assert first["text"]["format"]["schema"]["properties"]["outcome"]["enum"] == ["approve", "revise"]
    assert "hello" in fake.outputs(second)[0]
    assert all(r["headers"]["authorization"] == f"Bearer {DUMMY_KEY}" for r in api.requests)
    # Tokens are what the API reported, summed over the turn; the cost is them priced from the table.
    cached = sum(u["input_tokens_details"]["cached_tokens"] for u in api.usages)
    fresh = sum(u["input_tokens"] for u in api.usages) - cached
    out = sum(u["output_tokens"] for u in api.usages)
    assert (result.usage.input_tokens, result.usage.cache_read_input_tokens, result.usage.output_tokens) == (
        fresh, cached, out)
    price = BUILTIN[MODEL]
    assert result.usage.cost_usd == round((fresh * price.input + cached * price.cache_read + out * price.output)
                                          / 1e6, 6) > 0
    started = next(e for e in events_of(result.transcript) if e["type"] == "thread.started")
    assert result.data["session_id"] == started["thread_id"]
    shown = [(e.kind, e.data.get("tool"), e.data.get("text") or e.data.get("summary")) for e in events]
    assert ("agent_text", None, "Writing the notes.") in shown
    assert any(kind == "agent_tool" and tool == "shell" and "notes.txt" in str(what) for kind, tool, what in shown)
    assert not any("the tests are missing" in str(what) for _, _, what in shown)  # the report is not chat


def test_a_final_message_that_is_not_the_report_leaves_the_outcome_to_the_verdict_file(
        codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    api.push(fake.reply("I reviewed it.\nAll good."))
    result = codex().run(project.request())
    assert (result.outcome, result.reported, result.summary) == ("done", False, "All good.")


def test_the_typed_output_goes_into_the_schema_and_comes_back(codex: Any, project: Any,
                                                              api: fake.FakeCodexAPI) -> None:
    schema = {"type": "object", "required": ["files"], "properties": {"files": {"type": "integer"}}}
    api.push(fake.final("done", "counted", output={"files": 3}))
    result = codex().run(project.request(outcomes=("done",), output_schema=schema))
    assert result.data["output"] == {"files": 3}
    sent = api.bodies[0]["text"]["format"]["schema"]
    assert sent["properties"]["output"] == schema
    assert sent["required"] == ["outcome", "summary", "output"]


def test_an_inline_hook_resumes_the_steps_thread_and_a_subagent_hook_starts_fresh(
        codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    agent = codex()
    api.push(fake.final("approve", said="Remember the codeword PELICAN-42."))
    step = agent.run(project.request(conversation="main.review.-.v1"))
    step_requests = len(api.usages)
    api.push(fake.final("done", "hook ok"))
    hook = agent.run(project.request(kind="hook", conversation="main.review.-.v1", outcomes=("done", "fail"),
                                     prompt="# Post-review hook\nCheck the review."))

    inline = api.bodies[-1]
    assert "PELICAN-42" in json.dumps(inline["input"])  # the step's earlier messages came along
    assert "Check the review." in fake.user_text(inline)
    assert (hook.outcome, hook.summary, hook.data["session_id"]) == ("done", "hook ok", step.data["session_id"])
    # Codex reports the resumed thread's running total: the hook is charged only its own request.
    [own] = api.usages[step_requests:]
    assert hook.usage.output_tokens == own["output_tokens"]
    assert hook.usage.input_tokens + hook.usage.cache_read_input_tokens == own["input_tokens"]

    api.push(fake.final("done"))
    sub = agent.run(project.request(kind="hook", conversation="main.review.-.v1.post-hook",
                                    outcomes=("done", "fail"), prompt="# Subagent hook\nLook again."))
    assert "PELICAN-42" not in json.dumps(api.bodies[-1]["input"])
    assert sub.data["session_id"] != step.data["session_id"]


def test_a_retried_step_starts_a_new_thread_with_a_note_of_the_earlier_one(codex: Any, project: Any,
                                                                          api: fake.FakeCodexAPI) -> None:
    agent = codex()
    api.push(fake.final("approve", said="First try: PELICAN-42."))
    first = agent.run(project.request(conversation="main.review.-.v1"))
    api.push(fake.final("approve"))
    second = agent.run(project.request(conversation="main.review.-.v1", attempt=2))
    assert "PELICAN-42" not in json.dumps(api.bodies[-1]["input"])
    assert "attempt 2" in fake.user_text(api.bodies[-1])
    assert first.data["session_id"] in fake.user_text(api.bodies[-1])
    assert second.data["session_id"] != first.data["session_id"]


def test_max_turns_stops_codex_and_fails_the_step(codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    api.push(fake.reply(fake.shell("echo one")), fake.reply(fake.shell("echo two")),
             fake.reply(fake.shell("echo three")), fake.final())
    with pytest.raises(AgentFailed) as caught:
        codex(max_turns=1).run(project.request())
    assert "turn limit (1 tool calls)" in caught.value.reason
    assert "max_turns" in caught.value.reason
    assert len(api.bodies) < 4  # stopped before its fourth request


def test_an_api_error_fails_the_step_in_one_line(codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    api.push(fake.error(400))
    with pytest.raises(AgentFailed) as caught:
        codex().run(project.request())
    assert caught.value.reason.startswith("Codex failed")
    assert "\n" not in caught.value.reason
    assert any(e["type"] in ("turn.failed", "error") for e in events_of(caught.value.transcript))


def test_an_exhausted_run_budget_is_refused_before_codex_starts(codex: Any, project: Any,
                                                                api: fake.FakeCodexAPI) -> None:
    spent = Budget(max_cost_usd=0.01, run_spent=Usage(cost_usd=0.02))
    with pytest.raises(BudgetExhausted) as caught:
        codex().run(project.request(budget=spent))
    assert "run cost budget reached" in caught.value.reason
    assert api.requests == []


def test_a_cost_cap_needs_a_priced_model(codex: Any) -> None:
    from specd.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        codex(model="my-local-model").check_budget(Budget(max_cost_usd=1.0), "pipeline.json")
    assert "price_per_mtok" in str(caught.value)
    codex(model="my-local-model", price_per_mtok={"input": 1, "output": 2}).check_budget(
        Budget(max_cost_usd=1.0), "pipeline.json")  # priced: accepted


def test_codex_keeps_its_state_in_the_tasks_folder_never_the_users(codex: Any, project: Any,
                                                                   api: fake.FakeCodexAPI, tmp_path: Path) -> None:
    mine = tmp_path / "home" / ".codex"
    mine.mkdir(parents=True)
    (mine / "config.toml").write_text('model = "users-own-model"\n')
    (mine / "AGENTS.md").write_text("The user's own notes: HERON-9.\n")
    (project.root / ".specd" / "codex").mkdir(parents=True)
    (project.root / ".specd" / "codex" / "AGENTS.md").write_text("Project notes for Codex: OSPREY-7.\n")
    api.push(fake.final())
    codex().run(project.request())

    home = project.task_dir / "transcripts" / ".agent" / "codex"
    assert (home / "AGENTS.md").is_file()  # the project's folder was copied in
    assert list((home / "sessions").rglob("rollout-*.jsonl"))  # Codex's session lives in the task's copy
    sent = json.dumps(api.bodies[0]["input"])
    assert "OSPREY-7" in sent
    assert "HERON-9" not in sent
    assert sorted(p.name for p in mine.iterdir()) == ["AGENTS.md", "config.toml"]  # nothing written there


@pytest.mark.skipif(not active(), reason="the write is refused by the jail (bubblewrap)")
def test_a_write_to_the_pipeline_file_is_refused(codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    pipeline = project.root / ".specd" / "pipeline.json"
    pipeline.write_text('{"schema_version": "1.0"}\n')
    api.push(fake.reply(fake.shell("echo '{}' > .specd/pipeline.json; echo status=$?")), fake.final())
    codex().run(project.request())
    assert pipeline.read_text() == '{"schema_version": "1.0"}\n'
    said = fake.outputs(api.bodies[-1])[0]
    assert "Read-only file system" in said
    assert "status=1" in said


def test_the_key_comes_from_the_variable_api_key_env_names_and_no_other_secret_passes(
        codex: Any, project: Any, api: fake.FakeCodexAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("TEAM_CODEX_KEY", "sk-team-0123456789abcdef")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notforcodex0123456789abcdef")
    api.push(fake.reply(fake.shell("env | cut -d= -f1 | sort")), fake.final())
    codex(api_key_env="TEAM_CODEX_KEY").run(project.request())
    assert {r["headers"]["authorization"] for r in api.requests} == {"Bearer sk-team-0123456789abcdef"}
    names = fake.outputs(api.bodies[-1])[0].split()
    assert "TEAM_CODEX_KEY" in names  # Codex's own key variable reaches it (in the jail, as a stand-in)
    assert "GITHUB_TOKEN" not in names


def test_codexs_own_key_never_reaches_its_commands(codex: Any, project: Any, api: fake.FakeCodexAPI) -> None:
    """As the model: Codex's shell inherits its environment, so `env` (or its parent's /proc/PID/environ) gave the
    model the API key. In the jail Codex now signs with a stand-in, and specd's key guard puts the key in."""
    if not active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it)")
        pytest.skip("the key guard is part of the jail; bubblewrap is not available here")
    look = "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; true"
    api.push(fake.reply(fake.shell(look)), fake.final())
    codex().run(project.request())
    said = fake.outputs(api.bodies[-1])[0]
    assert "OPENAI_API_KEY=specd-stand-in-" in said  # the command ran, and saw the stand-in
    assert DUMMY_KEY not in said
    assert len(api.requests) >= 2
    assert {r["headers"]["authorization"] for r in api.requests} == {f"Bearer {DUMMY_KEY}"}


def test_a_step_past_its_timeout_stops_codex_and_its_command(codex: Any, project: Any,
                                                              api: fake.FakeCodexAPI) -> None:
    mark = f"late-{uuid.uuid4().hex}.txt"
    api.push(fake.reply(fake.shell(f"touch started.txt; sleep 300; touch {mark}")), fake.final())
    with pytest.raises(AgentFailed) as caught:  # long enough for Codex to start the command, well before 300 s
        codex().run(project.request(timeout=8))
    assert caught.value.reason == "timed out after 8 s"
    assert (project.root / "started.txt").exists()
    assert [line for line in _processes().values() if mark in line] == []  # the command went with Codex


def _processes() -> dict[str, str]:
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            found[entry.name] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found

