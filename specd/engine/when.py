"""``when:`` on a step (issue 30): a false condition skips the step, recorded with the condition and its value.

The condition is evaluated once, as the step is about to be entered (a resumed step that was already
entered is not asked again), by the sandboxed Jinja2 of specd.pipeline.template, never ``eval``. A
condition that cannot be evaluated (a step it names has not run yet) blocks the run with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from specd.engine import gates
from specd.engine.loop import Loop, Stop
from specd.engine.outputs import known, values
from specd.pipeline import template
from specd.pipeline.model import Step
from specd.state.model import Frame


def skipped(loop: Loop, frame: Frame, step: Step, mode: str) -> bool:
    """True when the step's ``when:`` is false: recorded as a skipped row with the condition and its value."""
    if not step.when:
        return False
    facts = values(loop.state, mode, frame.phase, 1)  # before the step is entered: its attempt is the first
    try:
        value = template.evaluate(step.when, facts)
    except template.TemplateError as exc:
        raise Stop("BLOCKED", f"step {step.name!r}: when {step.when!r} cannot be evaluated: {exc} (known so "
                   f"far: {known(facts)}); fix the "
                   f"condition in {loop.config.source} ({step.where}.when), or run the steps it names first, "
                   f"then `specd continue {loop.task}`") from None
    if value:
        return False
    summary = f"skipped: when {step.when!r} is {_shown(value)}"
    gates.skip(loop.state, loop.config, frame, step, summary)
    loop.state.history[-1].update({"when": step.when, "when_value": _plain(value)})
    loop.store.save(loop.state)
    loop.events.emit("step_skipped", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                     reason=f"when {step.when} is {_shown(value)}")
    return True


def _plain(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | list | dict) or value is None else str(value)


def _shown(value: Any) -> str:
    return json.dumps(_plain(value), default=str)
