"""How the core talks to a person, without knowing about terminals.

The CLI supplies an implementation (rich prompts on a TTY, plain lines from
stdin otherwise); tests supply a scripted one. ``None`` from any question
means "no answer" (EOF, or no human present), which callers treat as stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

GateAction = Literal["proceed", "skip", "back", "jump", "stop"]


@dataclass(frozen=True)
class GateInfo:
    task: str
    step: str
    pipeline: str
    phase: str | None
    description: str
    workflow: str
    position: str  # human-readable "where the task stands"
    steps: tuple[str, ...]  # step names in this pipeline, for jump


@dataclass(frozen=True)
class GateAnswer:
    action: GateAction
    target: str | None = None  # the step name for "jump"
    unanswered: bool = False  # a "stop" because nobody answered (end of input, no human): no one's decision


class Human(Protocol):
    @property
    def present(self) -> bool:
        """True when someone can answer (interactive and semi-auto modes)."""
        ...

    def gate(self, info: GateInfo) -> GateAnswer: ...

    def ask(self, question: str) -> str | None: ...

    def approve_command(self, command: str) -> bool: ...


class NoHuman:
    """Auto mode: nobody is there, every question goes unanswered."""

    present = False

    def gate(self, info: GateInfo) -> GateAnswer:
        return GateAnswer("stop", unanswered=True)

    def ask(self, question: str) -> str | None:
        return None

    def approve_command(self, command: str) -> bool:
        return False
