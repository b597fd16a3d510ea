"""API faults: the one retry layer (specd's; the SDK's is off), rate-limit pauses, resuming a failed step."""

from __future__ import annotations

import json
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.base import AgentFailed


def _notices(events: Any) -> list[str]:
    return [e.data["message"] for e in events if e.kind == "notice"]


def test_overloaded_twice_then_success(project: Any, server: Any, make_agent: Any, sleeps: Any) -> None:
    server.push(fake.error(529), fake.error(529), fake.complete("approve"))
    assert make_agent().run(project.request()).outcome == "approve"
    # specd retried, with visible backoff; the SDK never retried on its own (its counter stays 0).
    assert [r["headers"]["x-stainless-retry-count"] for r in server.requests] == ["0", "0", "0"]
    assert sleeps == [0.001, 0.001]  # the server's retry-after-ms: 1, honoured


def test_sse_error_after_200_is_retried_by_the_loop(
    project: Any, server: Any, make_agent: Any, events: Any, sleeps: Any
) -> None:
    server.push(fake.sse_error("overloaded_error"), fake.complete("approve"))
    result = make_agent().run(project.request())
    assert result.outcome == "approve"
    assert len(server.requests) == 2
    assert any("retrying" in n for n in _notices(events))
    assert sleeps == [0.001]
    records = [json.loads(line) for line in result.transcript.read_text().splitlines()]
    assert any(r["type"] == "error" and r["transient"] for r in records)


def test_dropped_stream_is_retried(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.drop(after_events=4), fake.complete("approve"))
    assert make_agent().run(project.request()).outcome == "approve"
    assert len(server.requests) == 2


def test_long_rate_limit_pauses_and_says_so(
    project: Any, server: Any, make_agent: Any, events: Any, sleeps: Any
) -> None:
    server.push(fake.error(429, retry_after=90), fake.complete("approve"))
    assert make_agent().run(project.request()).outcome == "approve"
    assert sleeps == [90.0]
    assert "rate limited: resuming in 90 s (Ctrl-C stops the run)" in _notices(events)


def test_persistent_500_fails_then_attempt_2_resumes(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")))
    server.responder = lambda body: fake.error(500)
    agent = make_agent(max_retries=2)
    with pytest.raises(AgentFailed, match="InternalServerError") as failure:
        agent.run(project.request())
    # 1 good call, then 1 + max_retries attempts of the failing turn: one layer, not multiplied.
    assert len(server.requests) == 1 + 3
    assert failure.value.transcript is not None
    assert failure.value.transcript.is_file()
    assert failure.value.usage.output_tokens == server.usages[0]["output_tokens"]
    saved = json.loads((project.task_dir / "transcripts" / "run-1" / "review.conversation.json").read_text())
    assert saved["status"] == "open"

    server.responder = None
    server.push(fake.complete("approve", "resumed"))
    result = make_agent().run(project.request(attempt=2))
    assert result.outcome == "approve"
    resumed = server.bodies[-1]["messages"]
    assert len(resumed) == 3  # the first turn, the read_file call, and its result (+ the resume note)
    assert "def main()" in json.dumps(resumed[2])
    assert "resumed (attempt 2)" in json.dumps(resumed[2])
    assert result.transcript != failure.value.transcript


def test_attempt_2_under_a_new_run_id_finds_the_open_conversation(
    project: Any, server: Any, make_agent: Any
) -> None:
    server.push(fake.message(fake.tool("list_files", pattern="*.md")), fake.error(400))
    with pytest.raises(AgentFailed):
        make_agent().run(project.request())
    server.push(fake.complete())
    make_agent().run(project.request(attempt=2, run_id="run-2"))
    assert len(server.bodies[-1]["messages"]) == 3


def test_interrupt_saves_the_conversation(project: Any, server: Any, make_agent: Any, scripted_human: Any) -> None:
    class Interrupting(scripted_human):  # type: ignore[misc]
        def ask(self, question: str) -> str | None:
            raise KeyboardInterrupt

    server.push(fake.message(fake.tool("ask_user", question="?")))
    with pytest.raises(KeyboardInterrupt):
        make_agent(Interrupting(present=True)).run(project.request(mode="interactive"))
    saved = json.loads((project.task_dir / "transcripts" / "run-1" / "review.conversation.json").read_text())
    assert saved["messages"][-1]["role"] == "assistant"  # the unanswered tool call is kept, and closed on resume
    server.push(fake.complete())
    make_agent().run(project.request(attempt=2))
    result_block = fake.tool_results(server.bodies[-1])[0]
    assert result_block["is_error"]
    assert "interrupted" in result_block["content"]


def test_bad_request_is_not_retried(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.error(400))
    with pytest.raises(AgentFailed, match="BadRequestError"):
        make_agent().run(project.request())
    assert len(server.requests) == 1


def test_auth_error_names_the_fix(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.error(401, error_type="authentication_error"))
    with pytest.raises(AgentFailed, match="check ANTHROPIC_API_KEY"):
        make_agent().run(project.request())


def test_slow_response_times_out_and_is_retried(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message("late", delay=1.5), fake.complete("approve"))
    result = make_agent(request_timeout=0.3, max_retries=1).run(project.request())
    assert result.outcome == "approve"
    assert len(server.requests) == 2
