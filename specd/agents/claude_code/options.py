"""From the pipeline's ``agent:`` block and a request to Claude Code's command line.

The shipped permissions let the built-in workflows read and edit the project
and run its tests, and nothing else without asking, which in ``-p`` mode means
the call is denied and the step says so. README "Use it with Claude Code"
lists exactly what they allow; a pipeline's ``allowed_tools`` replaces them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specd.agents.base import AgentRequest, Budget, BudgetExhausted, Usage
from specd.system.places import deny_rules, git_dirs

PERMISSION_MODE = "acceptEdits"  # edits inside the project need no approval; other tools need a rule
_TEST_RUNNERS = ("pytest", "python -m pytest", "python3 -m pytest", "uv run pytest", "tox", "nox",
                 "npm test", "npm run test", "yarn test", "pnpm test", "go test", "cargo test", "make test",
                 "make check")
_READ_COMMANDS = ("git status", "git diff", "git log", "git show", "ls", "grep", "rg")
# Edits inside the project only ("/" is the project root, Claude Code's working directory; an Edit rule
# covers Write and NotebookEdit too): a write anywhere else is asked for, which `-p` refuses.
ALLOWED_TOOLS = ("Read", "Edit(/**)", "Glob", "Grep",
                 *(f"Bash({command}:*)" for command in (*_TEST_RUNNERS, *_READ_COMMANDS)))
# Network tools are hidden rather than denied: a denial would block the step, hiding just steers the model.
DISALLOWED_TOOLS = ("WebFetch", "WebSearch")


@dataclass(frozen=True)
class Options:
    model: str | None = None
    max_turns: int | None = None
    permission_mode: str = PERMISSION_MODE
    allowed_tools: tuple[str, ...] = ALLOWED_TOOLS
    disallowed_tools: tuple[str, ...] = DISALLOWED_TOOLS
    extra_args: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Options:
        turns = settings.get("max_turns")
        return cls(model=settings.get("model") or None, max_turns=int(turns) if turns else None,
                   permission_mode=str(settings.get("permission_mode") or PERMISSION_MODE),
                   allowed_tools=_strings(settings.get("allowed_tools"), ALLOWED_TOOLS),
                   disallowed_tools=_strings(settings.get("disallowed_tools"), DISALLOWED_TOOLS),
                   extra_args=_strings(settings.get("extra_args"), ()))

    def argv(self, binary: str, request: AgentRequest, session: list[str]) -> list[str]:
        """The whole command line; the prompt itself goes to stdin."""
        # One schema for every step and no step-specific system text: Claude Code's tool list and system
        # prompt open the cached prefix, so anything that changes per step there rewrites ~30k cached
        # tokens at each step's first request. The step's outcomes (and typed output) are in the prompt
        # (the user turn), and specd checks what comes back against them.
        argv = [binary, "-p", "--output-format", "stream-json", "--verbose",
                "--json-schema", SHARED_SCHEMA, "--permission-mode", self.permission_mode, *session]
        model = request.model or self.model
        turns = request.max_turns or self.max_turns
        if model:
            argv += ["--model", model]
        if turns:
            argv += ["--max-turns", str(turns)]
        budget = remaining_budget(request.budget)
        if budget is not None:
            argv += ["--max-budget-usd", f"{budget:.6f}"]
        # Both lists are variadic in Claude Code's parser; each ends where the next --flag starts.
        if self.allowed_tools:
            argv += ["--allowedTools", *self.allowed_tools]
        # specd's machinery is refused at write time, whatever the pipeline allows (checked after the step too).
        denied = deny_rules(request.project_root, request.task_dir, git_dirs(request.project_root))
        argv += ["--disallowedTools", *self.disallowed_tools, *denied]
        return argv + list(self.extra_args)


def step_schema() -> dict[str, Any]:
    """The structured output every step ends with: the outcome as a string (specd refuses one the step does
    not declare), a one-line summary and, for a step that declares one, its typed ``output`` (issue 30),
    which specd validates against the step's schema and sends back when it does not match."""
    return {
        "type": "object", "additionalProperties": False, "required": ["outcome", "summary"],
        "properties": {
            "outcome": {"type": "string", "description": "exactly one of the outcomes the step's prompt allows"},
            "summary": {"type": "string", "description": "one line: what was done or decided"},
            "output": {"description": "only when the step's prompt asks for a typed output: that object"}}}


SHARED_SCHEMA = json.dumps(step_schema(), sort_keys=True)


def remaining_budget(budget: Budget) -> float | None:
    """Dollars this invocation may spend: the tighter of what is left of the run and the step's cap."""
    limits = []
    if budget.max_cost_usd is not None:
        limits.append(budget.max_cost_usd - budget.run_spent.cost_usd)
    if budget.max_step_cost_usd is not None:
        limits.append(budget.max_step_cost_usd)
    if not limits:
        return None
    left = min(limits)
    if left <= 0:
        raise BudgetExhausted(budget.check(Usage()) or f"cost budget reached (${left:g} left)")
    return left


def _strings(value: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    return tuple(str(item) for item in value)
