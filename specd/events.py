"""What the loop tells the outside world. The core reports; the UI draws.

An event is a kind plus a flat payload. Subscribers are plain callables, so
tests can collect events in a list and the terminal UI can render them live.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from specd.redact import redact_obj

# The kinds emitted (payload keys in brackets):
#   run_started [task, run_id, mode, resumed, agent]     run_finished [task, status, exit_code, reason, usage]
#   step_started [step, pipeline, phase, attempt]        step_skipped [step, pipeline, phase, reason]
#   step_finished [step, pipeline, phase, outcome, summary, usage, (members: a parallel group's)]
#   gate [step, pipeline, phase, description]            hook_started [hook, point, step, source]
#   hook_finished [hook, point, step, ok, optional, reason, output]
#   checks_started [step, pipeline, phase, round]        checks_finished [step, pipeline, phase, ok]
#   usage [step, *_tokens, cost_usd, run_cost_usd]      agent_text [step, text]  agent_tool [step, tool, summary]
#   notice [message, (step, handoff)]                    warning [message]
# Every payload is redacted on emit, so no listener (UI, journal, git) ever holds a secret.


@dataclass(frozen=True)
class Event:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


Listener = Callable[[Event], None]


class EventBus:
    def __init__(self, *listeners: Listener) -> None:
        self._listeners: list[Listener] = list(listeners)
        self._one_at_a_time = threading.RLock()

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, kind: str, **data: Any) -> None:
        event = Event(kind, redact_obj(data))
        # A parallel group's agents report (usage, text) from threads of their own: listeners see one event at a
        # time, in one order. Re-entrant: a listener may emit in turn.
        with self._one_at_a_time:
            for listener in self._listeners:
                listener(event)

