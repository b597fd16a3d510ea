"""The gemini backend's parts without the CLI: the final answer, prices, the stream, options, checks, wiring."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from specd.agents.base import AgentContext, AgentRequest
from specd.agents.factory import _parse, make_agent
from specd.agents.gemini import check, prices
from specd.agents.gemini.options import Options, auth_type
from specd.agents.gemini.stream import read_stream
from specd.agents.gemini.verdict import answer
from specd.errors import ConfigError
from specd.events import Event, EventBus
from specd.system.netlist import GEMINI_HOSTS, api_hosts

OUTCOMES = ("approve", "revise")


@pytest.mark.parametrize("text", [
    '{"outcome": "revise", "summary": "two bugs"}',
    'Reviewed.\n```json\n{"outcome": "revise", "summary": "two bugs"}\n```',
    'First I thought {"outcome": "approve"} but no: {"outcome": "revise", "summary": "two bugs"}',
])
def test_the_last_outcome_object_in_the_final_text_is_the_answer(text: str) -> None:
    found, problem = answer(text, OUTCOMES, None)
    assert found == {"outcome": "revise", "summary": "two bugs"}
    assert problem == ""


@pytest.mark.parametrize(("text", "output", "said"), [
    ("All good.", None, "held no JSON object"),
    ('{"outcome": "maybe", "summary": "?"}', None, '"maybe", which is not one of: approve, revise'),
    ('{"outcome": "approve", "summary": "ok"}', {"type": "object"}, "had no `output`"),
])
def test_a_final_text_that_is_not_a_valid_answer_says_why(text: str, output: dict[str, str] | None,
                                                          said: str) -> None:
    found, problem = answer(text, OUTCOMES, output)
    assert found is None
    assert said in problem


def test_tokens_per_model_are_priced_and_the_cached_part_recorded_apart() -> None:
    stats = {"models": {"gemini-2.5-flash": {"input_tokens": 10_000, "output_tokens": 1_000, "cached": 4_000},
                        "gemini-2.5-flash-lite": {"input_tokens": 2_000, "output_tokens": 100, "cached": 0}}}
    usage, unknown = prices.usage_from(stats, {})
    assert unknown == []
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (8_000, 1_100, 4_000)
    flash = (6_000 * 0.3 + 4_000 * 0.03 + 1_000 * 2.5) / 1e6
    lite = (2_000 * 0.1 + 100 * 0.4) / 1e6
    assert usage.cost_usd == pytest.approx(flash + lite, abs=2e-6)


def test_an_unknown_model_costs_the_dearest_rate_and_is_named() -> None:
    usage, unknown = prices.usage_from({"models": {"gemini-9-ultra": {"input_tokens": 1_000_000}}}, {})
    assert unknown == ["gemini-9-ultra"]
    assert usage.cost_usd == prices.FALLBACK.input
    priced, _ = prices.usage_from({"models": {"gemini-9-ultra": {"input_tokens": 1_000_000}}},
                                  {"pricing": {"gemini-9-ultra": {"input": 0.5, "output": 1}}})
    assert priced.cost_usd == 0.5


def test_a_pro_model_past_the_long_prompt_threshold_is_priced_at_the_long_rate() -> None:
    usage, _ = prices.usage_from({"models": {"gemini-2.5-pro": {"input_tokens": 300_000}}}, {})
    assert usage.cost_usd == pytest.approx(300_000 * 2.5 / 1e6)


genai_prices = pytest.importorskip("genai_prices") if not os.environ.get("CI") else __import__("genai_prices")


@pytest.mark.parametrize("model", sorted(prices.BUILTIN))
def test_the_table_matches_the_maintained_source_below_the_long_prompt_threshold(model: str) -> None:
    inp, cached, out = 100_000, 20_000, 10_000
    source = genai_prices.calc_price(genai_prices.Usage(input_tokens=inp, cache_read_tokens=cached,
                                                        output_tokens=out), model, provider_id="google")
    mine, _ = prices.usage_from({"models": {model: {"input_tokens": inp, "output_tokens": out,
                                                    "cached": cached}}}, {})
    assert mine.cost_usd == pytest.approx(float(source.total_price), abs=2e-6)


def test_the_stream_keeps_the_session_the_final_text_and_refused_machinery_writes(tmp_path: Path) -> None:
    lines = [{"type": "init", "session_id": "s-1", "model": "gemini-2.5-pro"},
             {"type": "message", "role": "assistant", "content": "Let me look.", "delta": True},
             {"type": "tool_use", "tool_name": "write_file", "tool_id": "w1",
              "parameters": {"file_path": str(tmp_path / ".specd" / "pipeline.json"), "content": "{}"}},
             {"type": "tool_result", "tool_id": "w1", "status": "error", "error": {"message": "EROFS"}},
             {"type": "message", "role": "assistant", "content": '{"outcome": ', "delta": True},
             {"type": "message", "role": "assistant", "content": '"approve"}', "delta": True},
             {"type": "result", "status": "success", "stats": {}}]
    events: list[Event] = []
    sink = io.StringIO()
    log = read_stream([json.dumps(line) + "\n" for line in lines] + ["not json\n"], sink, EventBus(events.append),
                      "review", tmp_path)
    assert log.session_id == "s-1"
    assert log.final_text == '{"outcome": "approve"}'
    assert log.refused == ["write_file (.specd/pipeline.json)"]
    assert log.errors == ["not json"]
    assert [e.data.get("tool") for e in events if e.kind == "agent_tool"] == ["write_file"]
    assert len(sink.getvalue().splitlines()) == len(lines) + 1


def test_options_map_model_resume_approval_and_turns(tmp_path: Path) -> None:
    request = AgentRequest(task="t", task_dir=tmp_path, project_root=tmp_path, step="plan", pipeline="main",
                           phase=None, kind="step", workflow=tmp_path / "plan.md", prompt="", outcomes=("done",),
                           mode="auto", run_id="r", conversation="c", max_turns=7)
    options = Options.from_settings({"model": "gemini-2.5-flash", "approval_mode": "auto_edit"})
    argv = options.argv("gemini", request, "s-1")
    assert argv[:3] == ["gemini", "-p", ""]
    assert argv[argv.index("--model") + 1] == "gemini-2.5-flash"
    assert argv[argv.index("--approval-mode") + 1] == "auto_edit"
    assert argv[argv.index("--resume") + 1] == "s-1"
    written = json.loads(options.write_settings(tmp_path, request, {"GEMINI_API_KEY": "k"}).read_text())
    assert written["model"]["maxSessionTurns"] == 7
    assert written["tools"]["sandbox"] is False
    assert written["telemetry"]["enabled"] is False
    assert auth_type({}) == "oauth-personal"
    assert auth_type({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GEMINI_API_KEY": "k"}) == "vertex-ai"


def test_the_jail_lets_gemini_reach_its_api_only() -> None:
    assert api_hosts("agent", "gemini", {}) == GEMINI_HOSTS
    assert api_hosts("agent", "gemini", {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8123"}) == ("127.0.0.1:8123",)
    assert api_hosts("project", "gemini", {}) == ()


def test_agent_specs_name_gemini_and_its_model() -> None:
    assert _parse("gemini", {}) == ("gemini", None)
    assert _parse("gemini:gemini-2.5-flash", {}) == ("gemini", "gemini-2.5-flash")
    assert _parse(None, {"backend": "gemini"})[0] == "gemini"


def fake_cli(tmp_path: Path, version: str) -> Path:
    script = tmp_path / "gemini"
    script.write_text(f"#!/bin/sh\necho '{version}'\n")
    script.chmod(0o755)
    return script


def test_checks_name_what_is_missing_and_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    with pytest.raises(ConfigError, match="`gemini` is not on PATH") as missing:
        check.find_gemini(env)
    assert "npm install -g @google/gemini-cli" in (missing.value.fix or "")
    with pytest.raises(ConfigError, match="SPECD_GEMINI_BIN=/nowhere/gemini is not an executable file"):
        check.find_gemini({**env, "SPECD_GEMINI_BIN": "/nowhere/gemini"})
    old = fake_cli(tmp_path, "0.1.0")
    with pytest.raises(ConfigError, match="0.1.0 .* is too old"):
        check.check_version(str(old), env)
    with pytest.raises(ConfigError, match="no GEMINI_API_KEY"):
        check.check_credentials(env)
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "oauth_creds.json").write_text("{}")
    check.check_credentials(env)  # a Google login will do
    new = fake_cli(tmp_path / ".gemini", "0.61.2")
    assert check.ready_binary({**env, "SPECD_GEMINI_BIN": str(new)}) == str(new)


def test_choosing_gemini_without_its_cli_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SPECD_GEMINI_BIN", raising=False)
    ctx = AgentContext(human=None, events=EventBus(lambda event: None))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="the gemini agent needs the Gemini CLI"):
        make_agent("gemini", {}, ctx, tmp_path)


def test_following_a_gemini_transcript_shows_the_models_text_only() -> None:
    from specd.tasks.transcript_text import readable

    said = {"type": "message", "role": "assistant", "content": "Looking.\nDone.", "delta": True}
    assert readable(json.dumps(said)) == ["Looking.", "Done."]
    assert readable(json.dumps({**said, "role": "user"})) == []  # the prompt, not the model
    assert readable(json.dumps({"type": "tool_use", "tool_name": "write_file", "parameters": {}})) == []
