"""Codex's JSON events read into what the verdict needs, without the CLI: the lines are what `codex exec --json`
0.169 prints (seen against the fake API), and the odd ones it prints when something goes wrong."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from specd.agents.anthropic.pricing import Price
from specd.agents.base import AgentFailed
from specd.agents.codex.stream import read_stream
from specd.agents.codex.verdict import usage_of, verdict
from specd.events import Event, EventBus

USAGE = {"input_tokens": 1000, "cached_input_tokens": 400, "cache_write_input_tokens": 0, "output_tokens": 50,
         "reasoning_output_tokens": 10}
PRICE = Price(1.0, 10.0, 1.0, 0.1)


def lines(*events: dict[str, Any] | str) -> list[str]:
    return [event if isinstance(event, str) else json.dumps(event) for event in events]


def item(kind: str, done: bool = True, **fields: Any) -> dict[str, Any]:
    return {"type": "item.completed" if done else "item.started", "item": {"id": "item_1", "type": kind, **fields}}


def read(*events: dict[str, Any] | str, max_turns: int | None = None) -> Any:
    shown: list[Event] = []
    sink = io.StringIO()
    log = read_stream(lines(*events), sink, EventBus(shown.append), "build", max_turns)
    return log, shown, sink.getvalue()


def test_a_finished_turn_gives_the_thread_the_report_and_the_usage() -> None:
    log, shown, written = read({"type": "thread.started", "thread_id": "th-1"}, {"type": "turn.started"},
                               item("command_execution", done=False, command="pytest -q"),
                               item("command_execution", command="pytest -q", exit_code=0),
                               item("agent_message", text='{"outcome": "revise", "summary": "two fail"}'),
                               {"type": "turn.completed", "usage": USAGE})
    assert (log.thread_id, log.turns, log.usage) == ("th-1", 1, USAGE)
    assert [(e.kind, e.data.get("tool"), e.data.get("summary")) for e in shown] == [
        ("agent_tool", "shell", "pytest -q")]
    assert len(written.splitlines()) == 6  # every line is in the transcript
    result = verdict(log, 0, usage_of(log.usage, {}, PRICE), Path("t.jsonl"), None)
    assert (result.outcome, result.summary, result.reported, result.data["session_id"]) == (
        "revise", "two fail", True, "th-1")


def test_usage_is_split_and_priced_and_a_resumed_thread_pays_only_what_it_added() -> None:
    usage = usage_of(USAGE, {}, PRICE)
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (600, 400, 50)
    assert usage.cost_usd == round((600 * 1.0 + 400 * 0.1 + 50 * 10.0) / 1e6, 6)
    later = {**USAGE, "input_tokens": 1900, "cached_input_tokens": 1000, "output_tokens": 70}  # the thread's total
    added = usage_of(later, USAGE, PRICE)
    assert (added.input_tokens, added.cache_read_input_tokens, added.output_tokens) == (300, 600, 20)


@pytest.mark.parametrize(("events", "said"), [
    ([{"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}],
     "Codex failed: unexpected status 401 Unauthorized"),
    ([{"type": "error", "message": "stream disconnected before completion"}],
     "Codex failed: stream disconnected before completion"),
    (["Error: unknown model provider `nowhere`"],
     "Codex exited with status 1 before finishing its turn: Error: unknown model provider `nowhere`"),
])
def test_a_failure_is_one_line_naming_what_codex_said(events: list[Any], said: str) -> None:
    log, _, _ = read(*events)
    with pytest.raises(AgentFailed) as caught:
        verdict(log, 1, usage_of(log.usage, {}, PRICE), Path("t.jsonl"), None)
    assert caught.value.reason == said


def test_the_reader_stops_past_the_turn_limit() -> None:
    calls = [item("command_execution", command=f"echo {n}") for n in range(5)]
    log, _, written = read({"type": "thread.started", "thread_id": "th-1"}, *calls, max_turns=2)
    assert (log.over_turns, log.turns) == (True, 3)
    assert len(written.splitlines()) == 4  # it stopped reading there
    with pytest.raises(AgentFailed) as caught:
        verdict(log, -15, usage_of(log.usage, {}, PRICE), Path("t.jsonl"), 2)
    assert "turn limit (2 tool calls)" in caught.value.reason


def test_a_plain_final_message_is_no_report_and_is_shown_as_text() -> None:
    log, shown, _ = read(item("agent_message", text="Reviewed.\nVerdict written."),
                         {"type": "turn.completed", "usage": USAGE})
    assert [(e.kind, e.data.get("text")) for e in shown] == [("agent_text", "Reviewed.\nVerdict written.")]
    result = verdict(log, 0, usage_of(log.usage, {}, PRICE), Path("t.jsonl"), None)
    assert (result.outcome, result.reported, result.summary) == ("done", False, "Verdict written.")
