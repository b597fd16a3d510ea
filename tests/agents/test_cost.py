"""Usage, cost and budgets: what the server reported, priced; budgets checked before each call."""

from __future__ import annotations

import re
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.anthropic import pricing
from specd.agents.base import Budget, BudgetExhausted, Usage


def _reported(server: Any) -> dict[str, int]:
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return {k: sum(u[k] for u in server.usages) for k in keys}


def test_usage_and_cost_equal_what_the_server_reported(
    project: Any, server: Any, make_agent: Any, events: Any
) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")), fake.message("thinking"),
                fake.complete("approve"))
    table = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}}
    result = make_agent(pricing=table).run(project.request())

    reported = _reported(server)
    assert {k: v for k, v in result.usage.as_dict().items() if k != "cost_usd"} == reported
    expected = (reported["input_tokens"] * 3 + reported["output_tokens"] * 15
                + reported["cache_creation_input_tokens"] * 3.75 + reported["cache_read_input_tokens"] * 0.3) / 1e6
    assert result.usage.cost_usd == pytest.approx(expected, abs=1e-6)
    per_call = [e.data for e in events if e.kind == "usage"]
    assert len(per_call) == 3
    assert [c["output_tokens"] for c in per_call] == [u["output_tokens"] for u in server.usages]
    assert all(c["step"] == "review" for c in per_call)
    assert per_call[-1]["run_cost_usd"] == pytest.approx(result.usage.cost_usd, abs=1e-6)


def test_run_budget_already_spent_stops_before_any_call(project: Any, server: Any, make_agent: Any) -> None:
    budget = Budget(max_cost_usd=0.50, run_spent=Usage(cost_usd=0.50))
    with pytest.raises(BudgetExhausted, match=r"run cost budget reached") as stop:
        make_agent().run(project.request(budget=budget))
    assert server.requests == []
    assert stop.value.usage == Usage()


def _first_call_estimate(project: Any, make_agent: Any) -> int:
    """The estimated prompt tokens of the step's first call, as the refusal reports it (no call is made;
    a separate conversation, so the step's own starts fresh)."""
    with pytest.raises(BudgetExhausted, match="budget would be passed") as stop:
        make_agent().run(project.request(conversation="probe", budget=Budget(max_step_tokens=1)))
    found = re.search(r"estimated at up to (\d+)", stop.value.reason)
    assert found, stop.value.reason
    return int(found.group(1))


def test_a_call_whose_prompt_alone_would_pass_the_budget_is_never_sent(
    project: Any, server: Any, make_agent: Any
) -> None:
    with pytest.raises(BudgetExhausted, match=r"run cost budget would be passed: spent \$0 of \$1e-07") as stop:
        make_agent().run(project.request(budget=Budget(max_cost_usd=1e-7)))
    assert server.requests == []
    assert stop.value.usage == Usage()
    estimate = _first_call_estimate(project, make_agent)
    assert server.requests == []
    # Conservative: the estimate is never below what the server then counts for the same prompt.
    server.push(fake.complete())
    make_agent().run(project.request())
    first = server.usages[0]
    assert estimate >= first["input_tokens"] + first["cache_creation_input_tokens"] + first["cache_read_input_tokens"]


def test_step_token_budget_stops_before_the_call_that_would_pass_it(
    project: Any, server: Any, make_agent: Any
) -> None:
    # Room for the first call (a little over its estimate: the probe itself added files the prompt lists),
    # not for the second, whose prompt repeats the first and the spent tokens count too.
    limit = int(_first_call_estimate(project, make_agent) * 1.2)
    server.push(fake.message(fake.tool("list_files", pattern="*")), fake.complete())
    with pytest.raises(BudgetExhausted, match="step tokens budget") as stop:
        make_agent().run(project.request(budget=Budget(max_step_tokens=limit)))
    assert len(server.requests) == 1
    assert stop.value.usage.total_tokens == sum(_reported(server).values())


def test_raising_the_budget_resumes_the_step(project: Any, server: Any, make_agent: Any) -> None:
    limit = int(_first_call_estimate(project, make_agent) * 1.2)
    server.push(fake.message(fake.tool("list_files", pattern="*")))
    with pytest.raises(BudgetExhausted):
        make_agent().run(project.request(budget=Budget(max_step_tokens=limit)))
    server.push(fake.complete("approve"))
    result = make_agent().run(project.request(attempt=2, budget=Budget(max_step_tokens=10**9)))
    assert result.outcome == "approve"
    assert len(server.bodies[-1]["messages"]) == 3  # continued, not restarted


def test_pricing_lookup() -> None:
    assert pricing.price_for("claude-opus-5-5")[0].input == 4
    assert pricing.price_for("claude-opus-5")[0].input == 5
    assert pricing.price_for("claude-haiku-4-5-20251001")[0].output == 5
    assert pricing.price_for("claude-sonnet-4-6")[0].input == 3
    fallback, known = pricing.price_for("gpt-7")
    assert not known
    assert fallback.input >= max(p.input for p in pricing.BUILTIN.values())
    custom, known = pricing.price_for("my-model", {"my-model": {"input": 1, "output": 2}})
    assert known
    assert (custom.cache_write, custom.cache_read) == (1.25, pytest.approx(0.1))
    assert pricing.context_window("claude-haiku-4-5") == 200_000
    assert pricing.context_window("claude-sonnet-5-5") == 1_000_000
    assert pricing.context_window("claude-sonnet-5-5", 5000) == 5000


def test_unknown_model_warns(project: Any, server: Any, make_agent: Any, events: Any) -> None:
    server.push(fake.complete())
    make_agent(model="claude-next-1").run(project.request())
    assert any("no price known for model claude-next-1" in e.data["message"] for e in events if e.kind == "warning")


def test_long_prompt_tier() -> None:
    haiku, _ = pricing.price_for("claude-haiku-5-5")
    short = pricing.usage_from({"input_tokens": 1000, "output_tokens": 1000}, haiku)
    long = pricing.usage_from({"input_tokens": 1000, "cache_read_input_tokens": 100_000, "output_tokens": 1000}, haiku)
    assert short.cost_usd == pytest.approx((1000 * 0.10 + 1000 * 0.50) / 1e6)
    assert long.cost_usd == pytest.approx((1000 * 0.50 + 100_000 * 0.05 + 1000 * 2.50) / 1e6)
