"""The Agent protocol: ``run(request) -> result``.

Backends signal trouble with two small exceptions that carry what was spent,
so the loop can record cost even for a step that did not finish:
``AgentFailed`` (the step failed: BLOCKED, exit 1) and ``BudgetExhausted``
(a budget would be passed: WAITING_FOR_HUMAN, exit 3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from specd.events import EventBus
from specd.human import Human

Kind = Literal["step", "hook"]


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            round(self.cost_usd + other.cost_usd, 6),
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cost_usd": self.cost_usd,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage:
        """Lenient, for reading what specd itself saved earlier; agents' reports go through ``parse``."""
        data = data or {}
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("cache_creation_input_tokens", 0)),
            int(data.get("cache_read_input_tokens", 0)),
            float(data.get("cost_usd", 0.0)),
        )

    @classmethod
    def parse(cls, data: Any, *, where: str) -> Usage:
        """Strictly, usage that an agent reported: ``ValueError`` names the field and what was wrong.

        A bad value must never count as zero: a negative or made-up cost would defeat the budgets.
        Keys other than the five known ones are ignored (agents report extra detail).
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: `usage` must be an object like {{\"input_tokens\": 120, "
                             f"\"output_tokens\": 40, \"cost_usd\": 0.002}}, not {_shown(data)}")
        inp, out, write, read = (_count(data, name, where) for name in TOKEN_FIELDS)
        cost = data.get("cost_usd", 0.0)
        if "cost_usd" in data and (isinstance(cost, bool) or not isinstance(cost, int | float)
                                   or not math.isfinite(cost) or cost < 0):
            raise ValueError(f"{where}: `usage.cost_usd` must be a non-negative number of US dollars, "
                             f"not {_shown(cost)}")
        return cls(inp, out, write, read, round(float(cost), 6))


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _count(data: Mapping[str, Any], name: str, where: str) -> int:
    if name not in data:
        return 0
    value = data[name]
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or value < 0:
        raise ValueError(f"{where}: `usage.{name}` must be a whole number of tokens (0 or more), not {_shown(value)}")
    return int(value)


def _shown(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"


@dataclass(frozen=True)
class Budget:
    """Limits and what is already spent; ``None`` means no limit."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_step_cost_usd: float | None = None
    max_step_tokens: int | None = None
    run_spent: Usage = field(default_factory=Usage)

    def check(self, step_spent: Usage, ahead: Usage | None = None) -> str | None:
        """Return why the next call must not be made, or None if it may.

        ``ahead`` is an estimate of the next call itself: a call that would pass a limit is refused
        before it is made, so a budget is a cap and not only a tripwire checked afterwards.
        """
        ahead = ahead or Usage()
        run = self.run_spent + step_spent
        limits = [
            (self.max_cost_usd, run.cost_usd, ahead.cost_usd, "run cost", "$"),
            (self.max_tokens, run.total_tokens, ahead.total_tokens, "run tokens", ""),
            (self.max_step_cost_usd, step_spent.cost_usd, ahead.cost_usd, "step cost", "$"),
            (self.max_step_tokens, step_spent.total_tokens, ahead.total_tokens, "step tokens", ""),
        ]
        for limit, spent, next_call, what, unit in limits:
            if limit is None:
                continue
            if spent >= limit:
                return f"{what} budget reached: spent {unit}{spent:g} of {unit}{limit:g}"
            if next_call and spent + next_call > limit:
                return (f"{what} budget would be passed: spent {unit}{spent:g} of {unit}{limit:g}, and the next "
                        f"model call is estimated at up to {unit}{next_call:g}")
        return None


@dataclass(frozen=True)
class AgentRequest:
    task: str
    task_dir: Path  # absolute
    project_root: Path  # absolute
    step: str
    pipeline: str
    phase: str | None
    kind: Kind
    workflow: Path  # absolute path of the .md
    prompt: str  # header + workflow body, frontmatter removed
    outcomes: tuple[str, ...]  # exactly the allowed outcomes (`done` only when the step declares none)
    mode: str  # interactive | semi-auto | auto
    run_id: str
    conversation: str  # inline hooks share their step's id; subagent hooks get a fresh one
    attempt: int = 1
    budget: Budget = field(default_factory=Budget)
    model: str | None = None
    max_turns: int | None = None
    context_files: tuple[str, ...] | None = None  # from workflow frontmatter `context:`
    settings: Mapping[str, Any] = field(default_factory=dict)  # pipeline `agent:` block
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None  # seconds before the backend stops the agent (the step's `timeout`)
    output_schema: Mapping[str, Any] | None = None  # the JSON Schema the step's `output` must match (issue 30)


@dataclass(frozen=True)
class AgentResult:
    outcome: str = "done"
    summary: str = ""
    usage: Usage = field(default_factory=Usage)
    transcript: Path | None = None
    data: Mapping[str, Any] = field(default_factory=dict)  # e.g. verdict, issues
    reported: bool = False


class AgentFailed(Exception):
    def __init__(self, reason: str, usage: Usage | None = None, transcript: Path | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage or Usage()
        self.transcript = transcript


class BudgetExhausted(Exception):
    """A budget stopped the agent; ``next_call_usd`` is the estimate of the call it refused (0 when it
    stopped after the fact), so the hint to raise the budget covers that call."""

    def __init__(self, reason: str, usage: Usage | None = None, next_call_usd: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage or Usage()
        self.next_call_usd = next_call_usd


class Agent(Protocol):
    name: str

    def run(self, request: AgentRequest) -> AgentResult: ...


@dataclass(frozen=True)
class AgentContext:
    """What a backend gets when it is built: the human and the event bus."""

    human: Human
    events: EventBus
