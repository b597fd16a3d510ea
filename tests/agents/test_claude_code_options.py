"""The claude command line specd builds: flags from the pipeline, the step and the budgets (no node needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specd.agents.base import Budget, BudgetExhausted, Usage
from specd.agents.claude_code.options import ALLOWED_TOOLS, Options
from specd.engine.machinery import deny_rules  # the engine's cached form: the same rules


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_defaults(project: Any) -> None:
    argv = Options.from_settings({}).argv("claude", project.request(outcomes=("approve", "revise")),
                                          ["--session-id", "abc"])
    assert argv[:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    # One schema for every step: the outcome is a string (specd refuses an undeclared one), so Claude Code's
    # StructuredOutput tool, and with it the start of the cached prefix, never changes between steps.
    schema = json.loads(flag(argv, "--json-schema"))
    assert schema["properties"]["outcome"] == {"type": "string",
                                               "description": "exactly one of the outcomes the step's prompt allows"}
    assert schema["required"] == ["outcome", "summary"]
    other = Options.from_settings({}).argv("claude", project.request(outcomes=("done",)), [])
    assert flag(other, "--json-schema") == flag(argv, "--json-schema")
    assert flag(argv, "--permission-mode") == "acceptEdits"
    assert flag(argv, "--session-id") == "abc"
    assert "--append-system-prompt" not in argv  # the header is said once, in the prompt
    allowed = argv[argv.index("--allowedTools") + 1: argv.index("--disallowedTools")]
    assert allowed == list(ALLOWED_TOOLS)
    assert "Bash(python -m pytest:*)" in allowed
    denied = argv[argv.index("--disallowedTools") + 1:]
    assert denied[:2] == ["WebFetch", "WebSearch"]
    assert denied[2:] == deny_rules(project.root, project.task_dir)
    assert {"Edit(/.specd/pipeline.*)", "Edit(/.specd/hooks/**)", "Edit(/.specd/workflows/**)"} <= set(denied)
    assert {"Edit(/.claude/settings.local.json)", "Edit(/.claude/hooks/**)", "Edit(/.mcp.json)"} <= set(denied)
    assert not {"Edit", "Write", "NotebookEdit"} & set(allowed)  # no bare rule: writes outside are refused
    assert "Edit(/**)" in allowed
    for absent in ("--model", "--max-turns", "--max-budget-usd"):
        assert absent not in argv


def test_a_step_overrides_model_and_turns_and_config_replaces_lists(project: Any) -> None:
    options = Options.from_settings({"model": "opus", "max_turns": 30, "permission_mode": "plan",
                                     "allowed_tools": ["Read"], "disallowed_tools": [],
                                     "extra_args": ["--add-dir", "../lib"]})
    argv = options.argv("claude", project.request(model="haiku", max_turns=3), [])
    assert (flag(argv, "--model"), flag(argv, "--max-turns"), flag(argv, "--permission-mode")) == ("haiku", "3", "plan")
    assert argv[-2:] == ["--add-dir", "../lib"]
    assert flag(argv, "--allowedTools") == "Read"
    # The machinery is refused whatever the pipeline says.
    assert argv[argv.index("--disallowedTools") + 1:-2] == deny_rules(project.root, project.task_dir)
    assert flag(Options.from_settings({"model": "opus"}).argv("claude", project.request(), []), "--model") == "opus"


@pytest.mark.parametrize(("budget", "expected"), [
    (Budget(max_cost_usd=2.0, run_spent=Usage(cost_usd=0.5)), "1.500000"),
    (Budget(max_cost_usd=2.0, max_step_cost_usd=0.25, run_spent=Usage(cost_usd=0.5)), "0.250000"),
    (Budget(max_step_cost_usd=0.75), "0.750000"),
])
def test_the_budget_remainder_becomes_max_budget_usd(project: Any, budget: Budget, expected: str) -> None:
    argv = Options.from_settings({}).argv("claude", project.request(budget=budget), [])
    assert flag(argv, "--max-budget-usd") == expected


def test_nothing_left_is_refused(project: Any) -> None:
    with pytest.raises(BudgetExhausted, match=r"run cost budget reached: spent \$3 of \$3"):
        Options.from_settings({}).argv("claude", project.request(budget=Budget(3.0, run_spent=Usage(cost_usd=3))), [])


def test_a_binary_gone_since_the_check_fails_the_step_plainly(project: Any, tmp_path: Any) -> None:
    from specd.agents.base import AgentContext, AgentFailed
    from specd.agents.claude_code import ClaudeCodeAgent
    from specd.events import EventBus

    agent = ClaudeCodeAgent(str(tmp_path / "gone" / "claude"), Options(), AgentContext(None, EventBus()))  # type: ignore[arg-type]
    with pytest.raises(AgentFailed, match=r"could not start .*gone/claude: No such file or directory"):
        agent.run(project.request())
