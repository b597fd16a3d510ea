"""A step whose output does not match its schema, or whose outcome it does not declare, runs again with the error
(issue 30).

Each refused output is a history row of its own (``kind: attempt``, outcome ``invalid_output``) with the
output and the error, saved before the next attempt runs, so a run killed in between neither loses the
error (the next attempt's prompt still carries it, from the saved ``Current``) nor repeats the refusal.
"""

from __future__ import annotations

from collections.abc import Callable

from specd.agents.base import AgentFailed, AgentResult, Usage
from specd.engine import records
from specd.engine.loop import Loop
from specd.engine.outputs import UNDECLARED, attempts, refusal
from specd.pipeline.model import Step
from specd.state.model import Current, Frame

REFUSED = "invalid_output"  # the outcome of an attempt row whose output was refused


def dispatch(loop: Loop, step: Step, frame: Frame, cur: Current, conversation: str,
             saved: Callable[[], None]) -> AgentResult:
    """Run the step until its output matches its schema; each refused output is a row, then another attempt.
    ``saved``: the machinery watch's, told of specd's own save of the row (not the agent's write)."""
    dispatcher = loop.dispatcher
    while True:
        dispatcher.output_error = cur.output_errors[-1] if cur.output_errors else ""
        result = dispatcher.step(step, frame.pipeline, frame.phase, conversation, cur.attempt)
        error = refusal(dispatcher.output_schema(step), result, dispatcher.allowed(step))
        if error is None:
            return result
        loop.spend(result.usage)
        cur.output_errors.append(error)
        loop.state.history.append(records.entry(
            cur, kind="attempt", outcome=REFUSED, summary=error, usage=result.usage, output=result.data.get("output"),
            output_error=error, transcript=str(result.transcript) if result.transcript else None))
        limit = attempts(step)
        if len(cur.output_errors) % limit == 0:  # as failures do: after a fix, `continue` gives `limit` more
            what = "report" if error.startswith(UNDECLARED) else "output"
            raise AgentFailed(f"its {what} was refused {limit} times; the last: {error}", Usage(), result.transcript)
        cur.attempt += 1
        loop.store.save(loop.state, settled=False)  # the refusal is recorded before the next attempt runs
        saved()
        loop.events.emit("warning", step=step.name, message=f"{step.name}: output refused ({error}); attempt "
                         f"{cur.attempt} of {limit} gets the error")
