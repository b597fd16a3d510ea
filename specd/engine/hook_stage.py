"""One hook stage of a step (global pre-step, step pre, step post, global post-step)."""

from __future__ import annotations

from typing import Literal

from specd.agents.base import BudgetExhausted
from specd.engine import records
from specd.engine.dispatch import HookResult
from specd.engine.loop import Loop
from specd.engine.machinery import Tampered
from specd.pipeline.model import Step
from specd.pipeline.resolve import global_hook, step_hook
from specd.state.model import Current, Frame
from specd.state.store import Heartbeat


def run(brain: Loop, stage: str, frame: Frame, step: Step, cur: Current, conversation: str) -> str | None:
    """Run the hook at this point, if any; returns why a required hook failed (the step must block)."""
    point: Literal["pre-step", "pre", "post", "post-step"] = stage  # type: ignore[assignment]
    hook = (global_hook(brain.config, point, brain.project) if point in ("pre-step", "post-step")
            else step_hook(brain.config, frame.pipeline, step, point, brain.project))  # type: ignore[arg-type]
    if hook is None:
        return None
    brain.store.save(brain.state)  # what ran before this hook (the step, an earlier hook) is recorded first
    brain.events.emit("hook_started", hook=hook.name, point=point, step=step.name, source=hook.source)
    tampered = None
    try:
        with Heartbeat(brain.store.heartbeat_path), brain.machinery.watch(brain.events, f"{point} hook {hook.name}"):
            result = brain.dispatcher.hook(hook, step, frame.pipeline, frame.phase, conversation)
    except Tampered as exc:  # optional or not, a hook that changed the machinery blocks the step
        tampered, result = exc, HookResult(False, str(exc))
    except BudgetExhausted as exc:  # a held budget wait, as in a step: the hook runs again once answered
        brain.spend(exc.usage)
        brain.budget_stop(f"{point} hook {hook.name}: {exc.reason}", frame, step, exc.next_call_usd)
    brain.spend(result.usage)
    brain.state.history.append(records.entry(cur, kind="hook", hook=f"{point}: {hook.name}", usage=result.usage,
                                             outcome="done" if result.ok else "failed",
                                             summary=result.reason or result.output[-500:]))
    brain.events.emit("hook_finished", hook=hook.name, point=point, step=step.name, ok=result.ok,
                      optional=hook.spec.optional, reason=result.reason, output=result.output)
    if result.ok:
        return None
    if hook.spec.optional and tampered is None:
        records.changelog_hook_failure(brain.store.task_dir, hook=hook.name, step=step.name, phase=frame.phase,
                                       reason=result.reason)
        return None
    return f"{'required ' if tampered is None else ''}{point} hook {hook.name} failed: {result.reason}"
