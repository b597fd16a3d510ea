"""What the loop tells the outside world. The core reports; the UI draws.

An event is a kind plus a flat payload. Subscribers are plain callables, so
tests can collect events in a list and the terminal UI can render them live.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The kinds the loop emits (payload keys in brackets):
#   run_started [task, run_id, mode, resumed]      run_finished [task, status, exit_code, reason]
#   step_started [step, pipeline, phase, attempt]  step_finished [step, pipeline, phase, outcome, summary, usage]
#   step_skipped [step, pipeline, phase, reason]   gate [step, pipeline, phase, description]
#   hook_started [hook, point, step, source]       hook_finished [hook, point, step, ok, optional, reason, output]
#   usage [step, input_tokens, output_tokens, cost_usd, run_cost_usd]  phase_started [phase, name]
#   notice [message]   warning [message]          agent_text [step, text]


@dataclass(frozen=True)
class Event:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


Listener = Callable[[Event], None]


class EventBus:
    def __init__(self, *listeners: Listener) -> None:
        self._listeners: list[Listener] = list(listeners)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, kind: str, **data: Any) -> None:
        event = Event(kind, data)
        for listener in self._listeners:
            listener(event)


def null_bus() -> EventBus:
    return EventBus()
