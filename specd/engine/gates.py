"""The gate before a step: show where the task stands, then act on the human's answer."""

from __future__ import annotations

from typing import Any

from specd.engine import records
from specd.engine.loop import Loop, Stop
from specd.engine.waiting import answers_text, waiting
from specd.git import identity
from specd.human import GateInfo
from specd.pipeline import cursor
from specd.pipeline.model import Step
from specd.pipeline.step_checks import OUTCOME as CHECKS_FAILED
from specd.state import checkpoint
from specd.state.model import Current, Frame, RunState


def take_answer(state: RunState, frame: Frame, step: Step) -> dict[str, Any] | None:
    """An answer given earlier (`specd approve`, `specd reject`) for this very step, used up here."""
    answer = state.answer
    if answer and (answer.get("step"), answer.get("pipeline"), answer.get("phase")) == (
            step.name, frame.pipeline, frame.phase):
        state.answer = None
        return answer
    return None


def ask(brain: Loop, frame: Frame, step: Step) -> bool:
    """True to run the step; False when the cursor moved (skip, back, jump). Stop raises."""
    state = brain.state
    workflow = brain.dispatcher.workflow(step) if step.workflow else None  # a parallel group runs none of its own
    steps = tuple(s.name for s in brain.config.steps(frame.pipeline))
    done = sum(1 for h in state.history if h["kind"] == "step" and not h.get("superseded"))
    position = f"{done} steps done so far; pipeline {frame.pipeline}"
    position += f", phase {frame.phase}" if frame.phase else ""
    members = ", ".join(m.name for m in step.members)
    described = step.description or (workflow.description if workflow else f"runs {members} side by side")
    info = GateInfo(brain.task, step.name, frame.pipeline, frame.phase, described,
                    str(workflow.path) if workflow else f"(a parallel group: {members})", position, steps)
    brain.events.emit("gate", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                      description=info.description)
    answer = brain.human.gate(info)
    # Whoever sits at this run's terminal (or pipes its stdin) answers as the project's git identity; a gate
    # nobody answered (end of input, a Temporal worker's run) is a wait, not someone's decision to stop.
    if not answer.unanswered:
        checkpoint.record(state, identity.here("terminal", brain.project.root),
                          answer.action + (f" {answer.target}" if answer.target else ""), step.name,
                          pipeline=frame.pipeline, phase=frame.phase)
    if answer.action == "proceed":
        return True
    if answer.action == "stop":
        raise Stop("WAITING_FOR_HUMAN", f"stopped at the gate before {step.name!r}; answer with "
                   + answers_text(brain.task), waiting("gate", frame, step))
    if answer.action == "skip":
        skip(state, brain.config, frame, step, "skipped at the gate")
        brain.events.emit("step_skipped", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                          reason="skipped at the gate")
    elif answer.action == "jump" and answer.target in steps:
        cursor.route(frame, brain.config, step, answer.target)
    elif answer.action == "back" and not cursor.back(frame, brain.config):
        brain.events.emit("notice", message=f"{step.name!r} is the first step of {frame.pipeline}; staying")
    brain.store.save(state)
    return False


def skip(state: RunState, config: Any, frame: Frame, step: Step, summary: str) -> None:
    """A skipped step counts as finished and is routed as its default outcome, `done`, or, for a step that
    routes outcomes but not `done` (the built-in review), as its first one (approve): so skipping review
    ends the phase instead of going to revise."""
    cur = Current(step.name, frame.pipeline, frame.phase, frame.visits.get(step.name, 0))
    state.history.append(records.entry(cur, kind="step", outcome="skipped", summary=summary))
    routed = [o for o in step.outcomes if o != CHECKS_FAILED]  # specd's own outcome, never a skip's
    target = step.target("done" if "done" in routed or not routed else routed[0])
    cursor.finish(frame, step.name)
    cursor.route(frame, config, step, "next" if target in ("stop", "fail", "repeat") else target)
