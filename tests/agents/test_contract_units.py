"""The pieces of the outcome contract on their own: strict usage, the budget's look-ahead, the prompt
header per backend, and the verdict file rules."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from specd.agents.base import AgentContext, AgentFailed, AgentRequest, AgentResult, Budget, Usage
from specd.agents.prompt import render_prompt
from specd.agents.scripted import ScriptedAgent
from specd.engine import verdict
from specd.events import EventBus
from specd.pipeline.workflow import Workflow


def test_usage_parse_accepts_numbers_and_ignores_extra_keys() -> None:
    usage = Usage.parse({"input_tokens": 10, "output_tokens": 5.0, "cache_read_input_tokens": 0,
                         "cost_usd": 1, "server_tool_use": {"web_search_requests": 1}}, where="x")
    assert usage == Usage(10, 5, 0, 0, 1.0)
    assert Usage.parse({}, where="x") == Usage()


@pytest.mark.parametrize(("data", "field"), [
    ([], "`usage`"),
    ({"input_tokens": -1}, "`usage.input_tokens`"),
    ({"cache_creation_input_tokens": "7"}, "`usage.cache_creation_input_tokens`"),
    ({"output_tokens": math.inf}, "`usage.output_tokens`"),
    ({"cost_usd": math.inf}, "`usage.cost_usd`"),
    ({"cost_usd": False}, "`usage.cost_usd`"),
    ({"cost_usd": None}, "`usage.cost_usd`"),
])
def test_usage_parse_names_the_bad_field(data: Any, field: str) -> None:
    with pytest.raises(ValueError, match=rf"^result\.json: {field} must be"):
        Usage.parse(data, where="result.json")


def test_usage_from_dict_stays_lenient_for_saved_state() -> None:
    assert Usage.from_dict(None) == Usage()
    assert Usage.from_dict({"input_tokens": "12", "cost_usd": "0.5"}) == Usage(12, 0, 0, 0, 0.5)


def test_budget_refuses_a_call_that_would_pass_a_limit() -> None:
    budget = Budget(max_cost_usd=1.0, run_spent=Usage(cost_usd=0.6))
    assert budget.check(Usage(cost_usd=0.3)) is None
    assert budget.check(Usage(cost_usd=0.3), Usage(input_tokens=10, cost_usd=0.1)) is None  # exactly at the limit
    reason = budget.check(Usage(cost_usd=0.3), Usage(input_tokens=10, cost_usd=0.2))
    assert reason == ("run cost budget would be passed: spent $0.9 of $1, and the next model call is estimated at "
                      "up to $0.2")
    assert budget.check(Usage(cost_usd=0.4)) == "run cost budget reached: spent $1 of $1"
    assert Budget(max_step_tokens=100).check(Usage(), Usage(input_tokens=101)) is not None


def _prompt(backend: str, kind: str = "step", meta: dict[str, Any] | None = None) -> str:
    workflow = Workflow(Path("/p/review.md"), "# Review\nDecide.", outcomes=("approve", "revise"),
                        meta=meta if meta is not None else {"verdict_file": "REVIEW.md"})
    return render_prompt(task="t", task_dir=Path("/p/.specd/tasks/t"), project_root=Path("/p"), step="review",
                         pipeline="main", phase=None, kind=kind, workflow=workflow,
                         outcomes=("approve", "revise", "done"), mode="auto", backend=backend)


def test_prompt_header_speaks_each_backends_terms() -> None:
    assert "calling the `complete_step` tool with exactly one allowed outcome (approve, revise, done)" in _prompt(
        "anthropic")
    claude = _prompt("claude_code")
    assert "final structured output: `outcome` (exactly one of: approve, revise, done)" in claude
    for backend in ("command", "scripted"):
        text = _prompt(backend)
        assert "`$SPECD_RESULT`" in text
        assert '{"outcome": "approve", "summary": "one line saying what was done"}' in text
    for backend in ("claude_code", "command", "scripted", "other"):
        assert "complete_step" not in _prompt(backend)
    assert "verdict file is REVIEW.md" in _prompt("command")
    assert "verdict file" not in _prompt("command", kind="hook")  # the fallback applies to steps only
    assert "verdict file" not in _prompt("command", meta={})


def _request(tmp_path: Path, **overrides: Any) -> AgentRequest:
    root = tmp_path / "proj"
    task_dir = root / ".specd" / "tasks" / "t"
    task_dir.mkdir(parents=True, exist_ok=True)
    values: dict[str, Any] = {
        "task": "t", "task_dir": task_dir, "project_root": root, "step": "review", "pipeline": "main",
        "phase": None, "kind": "step", "workflow": root / "review.md", "prompt": "Review.",
        "outcomes": ("approve", "revise", "done"), "mode": "auto", "run_id": "run-1", "conversation": "review",
        "frontmatter": {"verdict_file": "REVIEW.md"}, **overrides,
    }
    return AgentRequest(**values)


def test_verdict_words_map_to_allowed_outcomes_and_the_phase_file_wins(tmp_path: Path) -> None:
    request = _request(tmp_path, phase="01")
    before = verdict.look(request)
    (request.task_dir / "REVIEW.md").write_text("Verdict: revise\n")
    phase = request.task_dir / "phases" / "phase-01" / "REVIEW.md"
    phase.parent.mkdir(parents=True)
    phase.write_text("Example: `Verdict: revise`\n\n**Verdict:** PASS\n")
    settled = verdict.settle(request, AgentResult(usage=Usage(1, 2)), before)
    assert (settled.outcome, settled.data["verdict_file"]) == ("approve", str(phase))
    assert settled.usage == Usage(1, 2)


def test_a_reported_outcome_stands_against_a_stale_verdict_or_no_verdict_file(tmp_path: Path) -> None:
    request = _request(tmp_path)
    (request.task_dir / "REVIEW.md").write_text("Verdict: revise\n")
    reported = AgentResult(outcome="approve", reported=True)
    assert verdict.settle(request, reported, verdict.look(request)) is reported  # written before the step
    plain = replace(request, frontmatter={})
    assert verdict.settle(plain, AgentResult(), verdict.look(plain)).outcome == "done"


def test_a_verdict_that_fails_carries_the_spent_usage(tmp_path: Path) -> None:
    request = _request(tmp_path)
    with pytest.raises(AgentFailed, match=r"no 'Verdict:' line was found in \.specd/tasks/t/REVIEW\.md") as err:
        verdict.settle(request, AgentResult(usage=Usage(cost_usd=0.5)), verdict.look(request))
    assert err.value.usage.cost_usd == 0.5


def test_scripted_usage_is_checked_too(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("- usage: {input_tokens: lots}\n")
    agent = ScriptedAgent(script, AgentContext(None, EventBus()))  # type: ignore[arg-type]
    with pytest.raises(AgentFailed, match=r"entry 0: `usage.input_tokens` must be a whole number"):
        agent.run(_request(tmp_path))


def test_a_verdict_written_during_the_step_overrules_the_reported_outcome(tmp_path: Path) -> None:
    request = _request(tmp_path)
    before = verdict.look(request)
    (request.task_dir / "REVIEW.md").write_text("# Review\n\nVerdict: revise\n")
    settled = verdict.settle(request, AgentResult(outcome="approve", summary="fine", reported=True), before)
    assert settled.outcome == "revise"
    assert settled.summary == "fine"
    assert settled.data["reported_outcome"] == "approve"
    assert "reported outcome 'approve' but .specd/tasks/t/REVIEW.md says 'Verdict: revise'" in settled.data["warning"]


def test_a_fresh_verdict_that_agrees_leaves_no_warning(tmp_path: Path) -> None:
    request = _request(tmp_path)
    before = verdict.look(request)
    (request.task_dir / "REVIEW.md").write_text("Verdict: approved\n")  # a synonym of approve
    settled = verdict.settle(request, AgentResult(outcome="approve", reported=True), before)
    assert settled.outcome == "approve"
    assert "warning" not in settled.data


def test_a_fresh_verdict_that_is_no_outcome_fails_even_with_a_report(tmp_path: Path) -> None:
    request = _request(tmp_path)
    before = verdict.look(request)
    (request.task_dir / "REVIEW.md").write_text("Verdict: ship-it\n")
    with pytest.raises(AgentFailed, match="'Verdict: ship-it' is not an allowed outcome of step review"):
        verdict.settle(request, AgentResult(outcome="approve", reported=True), before)


def test_a_fresh_verdict_wins_over_a_stale_one_in_an_earlier_candidate(tmp_path: Path) -> None:
    request = _request(tmp_path, phase="01")
    phase_review = request.task_dir / "phases" / "phase-01" / "REVIEW.md"
    phase_review.parent.mkdir(parents=True)
    phase_review.write_text("Verdict: approve\n")  # left from an earlier visit
    before = verdict.look(request)
    (request.task_dir / "REVIEW.md").write_text("Verdict: revise\n")  # written by this step
    settled = verdict.settle(request, AgentResult(), before)
    assert settled.outcome == "revise"
    assert settled.data["verdict_file"] == str(request.task_dir / "REVIEW.md")


@pytest.mark.parametrize(("spec", "backend", "arg"), [
    ("claude_code", "claude_code", None), ("claude-code", "claude_code", None),
    ("claude:sonnet", "claude_code", "sonnet"),
    ("cmd:true", "command", "true"), ("scripted:s.yaml", "scripted", "s.yaml"), ("anthropic", "anthropic", None)])
def test_agent_specs_take_the_spellings_users_type(spec: str, backend: str, arg: str | None) -> None:
    from specd.agents.factory import _parse

    assert _parse(spec, {}) == (backend, arg)


def test_an_unknown_agent_spec_is_a_usage_error_naming_the_ones_there_are() -> None:
    from specd.agents.factory import _parse
    from specd.errors import UsageError

    with pytest.raises(UsageError, match="is not an agent spec") as raised:
        _parse("gpt", {})
    assert "--agent claude_code" in str(raised.value.fix)
