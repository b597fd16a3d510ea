"""Outcomes: complete_step, the nudge, the Verdict fallback, and failing with a clear message.

The Verdict fallback is the dispatcher's (``specd.engine.verdict``, the same for every backend); ``_settled``
applies it as the dispatcher does.
"""

from __future__ import annotations

from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.base import AgentFailed, AgentRequest, AgentResult
from specd.engine import verdict


def _settled(agent: Any, request: AgentRequest) -> AgentResult:
    before = verdict.look(request)
    return verdict.settle(request, agent.run(request), before)


def _nudge_text(body: dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in body["messages"][-1]["content"] if b.get("type") == "text")


def test_nudge_then_complete(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message("I think the work is fine."), fake.complete("approve", "looks good"))
    result = _settled(make_agent(), project.request(outcomes=("approve", "revise")))
    assert result.outcome == "approve"
    assert result.reported
    assert len(server.bodies) == 2
    assert "without calling complete_step" in _nudge_text(server.bodies[1])
    assert "outcomes (approve, revise) and" in _nudge_text(server.bodies[1])  # no implicit done


def test_verdict_line_is_the_fallback(project: Any, server: Any, make_agent: Any, events: Any) -> None:
    review = project.task_dir / "phases" / "phase-01" / "REVIEW.md"
    review.parent.mkdir(parents=True)
    text = "# Review: Phase 01\n\n## Findings\n1. wrong value\n\nVerdict: revise\n"
    server.push(fake.message(fake.tool("write_file", path=".specd/tasks/t/phases/phase-01/REVIEW.md",
                                       content=text)),
                fake.message("Done reviewing."), fake.message("Still done."))
    result = _settled(make_agent(), project.request(phase="01"))
    assert review.read_text() == text
    assert result.outcome == "revise"
    assert not result.reported
    assert result.data["verdict"] == "revise"
    assert "Verdict line in .specd/tasks/t/phases/phase-01/REVIEW.md" in result.summary
    assert any("Verdict line" in e.data["message"] for e in events if e.kind == "warning")


def test_a_verdict_left_from_an_earlier_review_does_not_decide(project: Any, server: Any, make_agent: Any) -> None:
    (project.task_dir / "REVIEW.md").write_text("Verdict: revise\n")  # written before this step began
    server.push(fake.message("Done."), fake.message("Really done."))
    with pytest.raises(AgentFailed, match=r"REVIEW.md still holds 'Verdict: revise' from before this step"):
        _settled(make_agent(), project.request())


def test_no_complete_step_and_no_verdict_fails_saying_so(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message("Done."), fake.message("Really done."))
    with pytest.raises(AgentFailed, match="reported no outcome and no 'Verdict:' line") as failure:
        _settled(make_agent(), project.request())
    assert ".specd/tasks/t/REVIEW.md (the workflow's verdict_file)" in failure.value.reason
    assert failure.value.transcript is not None
    assert failure.value.transcript.is_file()
    assert failure.value.usage.total_tokens > 0  # what the agent spent still counts


def test_no_complete_step_without_a_verdict_file_fails(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message("Done."), fake.message("Really done."))
    with pytest.raises(AgentFailed, match="without calling complete_step, even after a reminder"):
        make_agent().run(project.request(frontmatter={}))


def test_verdict_not_among_outcomes_fails(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message(fake.tool("write_file", path=".specd/tasks/t/REVIEW.md", content="Verdict: ship-it\n")),
                fake.message("Done."), fake.message("Done."))
    with pytest.raises(AgentFailed, match="'Verdict: ship-it' is not an allowed outcome"):
        _settled(make_agent(), project.request())


def test_disallowed_outcome_is_a_tool_error_the_model_can_fix(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.complete("done", "go"), fake.complete("approve", "ok"))
    result = make_agent().run(project.request(outcomes=("approve", "revise")))
    bad = fake.tool_results(server.bodies[1])[0]
    assert bad["is_error"]  # a review that declares its outcomes is not offered `done`
    assert "'done' is not allowed here; use one of: approve, revise" in bad["content"]
    assert result.outcome == "approve"


def test_cut_off_reply_is_continued_not_nudged(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message("half a thou", stop_reason="max_tokens"), fake.complete("approve"))
    assert make_agent().run(project.request()).outcome == "approve"
    assert "cut off" in _nudge_text(server.bodies[1])
