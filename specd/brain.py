"""THE loop: cursor → gate → hooks → dispatch → outcome → advance → save.

State is saved before anything is dispatched and after it ends, so a crash
re-runs only the part that was interrupted (at least once), and a finished
part is never run again (recorded once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from specd import cursor, gates, phases, records
from specd.agents.base import AgentFailed, Budget, BudgetExhausted, Usage
from specd.dispatch import Dispatcher
from specd.errors import STATUS_EXIT
from specd.events import EventBus
from specd.human import Human
from specd.modes import needs_gate
from specd.pipeline.model import PipelineConfig, Step
from specd.pipeline.resolve import global_hook, step_hook
from specd.project import Project
from specd.state.model import STAGES, Current, Frame, RunState, now
from specd.state.store import Heartbeat, StateStore
from specd.task import DEFAULT_STAGES, update_config

DEFAULT_MAX_VISITS = 10  # with no max_visits, a loop still ends with a human, never forever


class Stop(Exception):
    """Ends the loop with a status; the state is saved and the run can be resumed."""

    def __init__(self, status: str, reason: str, waiting: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.waiting = status, reason, waiting


@dataclass
class Brain:
    project: Project
    task: str
    config: PipelineConfig
    mode: str
    human: Human
    events: EventBus
    store: StateStore
    dispatcher: Dispatcher
    limits: Budget

    def run(self, state: RunState) -> int:
        self.state = state
        try:
            while (pos := cursor.settle(state, self.config, self._next_phase)) is not None:
                frame, step = pos.frame, pos.step
                self._sync_config(frame, step)
                if not step.enabled:  # disabled steps run nothing, not even their hooks
                    self.events.emit("step_skipped", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                                     reason="disabled")
                    frame.index += 1
                    continue
                cur = state.current
                if cur is None or (cur.step, cur.pipeline, cur.phase) != (step.name, frame.pipeline, frame.phase):
                    cur = self._enter(frame, step)
                    if cur is None:
                        continue
                for stage in STAGES:
                    if stage not in cur.completed:
                        self._run_stage(stage, frame, step, cur)
                        cur.completed.append(stage)
                        self.store.save(state)
                self._advance(frame, step, cur)
        except cursor.NoPhases as exc:
            return self._end("WAITING_FOR_HUMAN", f"step {exc.step!r} runs once per phase, but ROADMAP.md and "
                             "phases/ list none; add `### Phase 1: ...` headings, then `specd continue`",
                             {"kind": "no_phases", "step": exc.step})
        except Stop as stop:
            return self._end(stop.status, stop.reason, stop.waiting)
        except KeyboardInterrupt:
            return self._end("ABORTED", "interrupted; `specd continue` re-runs the interrupted part")
        return self._end("COMPLETE", "")

    def _enter(self, frame: Frame, step: Step) -> Current | None:
        """A fresh visit: enforce max_visits, ask at the gate, then record that the step began."""
        visit = frame.visits.get(step.name, 0) + 1
        limit = step.max_visits or DEFAULT_MAX_VISITS
        if visit > limit:
            raise Stop("WAITING_FOR_HUMAN", f"step {step.name!r} reached max_visits ({limit}) in this "
                       f"iteration; look at the task, then `specd continue` allows {limit} more",
                       {"kind": "max_visits", "step": step.name})
        if needs_gate(self.mode, step) and not gates.ask(self, frame, step):
            return None
        frame.visits[step.name] = visit
        self.state.current = Current(step.name, frame.pipeline, frame.phase, visit,
                                     snapshot=records.snapshot(self.store.task_dir))
        self.store.save(self.state)
        return self.state.current

    def _run_stage(self, stage: str, frame: Frame, step: Step, cur: Current) -> None:
        conversation = f"{frame.pipeline}.{step.name}.{frame.phase or '-'}.v{cur.visit}"
        if stage == "step":
            return self._run_step(frame, step, cur, conversation)
        point: Literal["pre-step", "pre", "post", "post-step"] = stage  # type: ignore[assignment]
        hook = (global_hook(self.config, point, self.project) if point in ("pre-step", "post-step")
                else step_hook(self.config, frame.pipeline, step, point, self.project))  # type: ignore[arg-type]
        if hook is None:
            return None
        self.events.emit("hook_started", hook=hook.name, point=point, step=step.name, source=hook.source)
        with Heartbeat(self.store.heartbeat_path):
            result = self.dispatcher.hook(hook, step, frame.pipeline, frame.phase, conversation)
        self._spend(result.usage)
        self.state.history.append(records.entry(cur, kind="hook", hook=f"{point}: {hook.name}", usage=result.usage,
                                                outcome="done" if result.ok else "failed",
                                                summary=result.reason or result.output[-500:]))
        self.events.emit("hook_finished", hook=hook.name, point=point, step=step.name, ok=result.ok,
                         optional=hook.spec.optional, reason=result.reason, output=result.output)
        if result.ok:
            return None
        if hook.spec.optional:
            records.changelog_hook_failure(self.store.task_dir, hook=hook.name, step=step.name, phase=frame.phase,
                                           reason=result.reason)
            return None
        self._fail(cur, f"required {point} hook {hook.name} failed: {result.reason}", kind="hook")
        return None

    def _run_step(self, frame: Frame, step: Step, cur: Current, conversation: str) -> None:
        reason = self.dispatcher.budget().check(Usage())  # every backend, not only those that check per call
        if reason:
            self._budget_stop(reason, step)
        cur.attempt += 1
        self.store.save(self.state)  # saved before dispatch: a crash now re-runs this step, once
        self.events.emit("step_started", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                         attempt=cur.attempt)
        try:
            with Heartbeat(self.store.heartbeat_path):
                result = self.dispatcher.step(step, frame.pipeline, frame.phase, conversation, cur.attempt)
        except AgentFailed as exc:
            self._spend(exc.usage)
            self._fail(cur, f"step {step.name!r} failed: {exc.reason}", kind="step")
        except BudgetExhausted as exc:
            self._spend(exc.usage)
            self._budget_stop(exc.reason, step)
        self._spend(result.usage)
        allowed = self.dispatcher.allowed(step)
        if result.outcome not in allowed:
            self._fail(cur, f"step {step.name!r} reported outcome {result.outcome!r}; allowed: {', '.join(allowed)}",
                       kind="step")
        cur.outcome, cur.summary = result.outcome, result.summary
        self.state.history.append(records.entry(
            cur, kind="step", outcome=result.outcome, summary=result.summary, usage=result.usage,
            artifacts=records.artifacts(cur.snapshot, self.store.task_dir),
            transcript=str(result.transcript) if result.transcript else None, **dict(result.data)))
        self.events.emit("step_finished", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                         outcome=result.outcome, summary=result.summary, usage=result.usage.as_dict())

    def _advance(self, frame: Frame, step: Step, cur: Current) -> None:
        outcome = cur.outcome or "done"
        target = step.target(outcome)
        self.state.current = None
        if target == "fail":
            raise Stop("FAILED", f"step {step.name!r} ended with outcome {outcome!r}, routed to fail",
                       {"kind": "fail", "step": step.name})
        cursor.route(frame, self.config, step, "next" if target == "stop" else target)
        self.store.save(self.state)
        if target == "stop":
            raise Stop("WAITING_FOR_HUMAN", f"step {step.name!r} ended with {outcome!r}, which needs a human",
                       {"kind": "outcome", "step": step.name})

    def _fail(self, cur: Current, reason: str, *, kind: str) -> None:
        self.state.failures.append({"at": now(), "step": cur.step, "phase": cur.phase, "kind": kind,
                                    "attempt": cur.attempt, "reason": reason})
        raise Stop("BLOCKED", reason + "; fix the cause, then `specd continue` retries it",
                   {"kind": kind, "step": cur.step})

    def _budget_stop(self, reason: str, step: Step) -> None:
        raise Stop("WAITING_FOR_HUMAN", f"{reason}; raise the budget (--max-cost or agent.max_cost_usd) and "
                   "`specd continue`", {"kind": "budget", "step": step.name})

    def _spend(self, usage: Usage) -> None:
        self.state.usage = (Usage.from_dict(self.state.usage) + usage).as_dict()

    def _next_phase(self, after: str | None) -> phases.Phase | None:
        return phases.next_phase(self.store.task_dir, after)

    def _sync_config(self, frame: Frame, step: Step) -> None:
        stage = step.stage or (step.workflow and self.dispatcher.workflow(step).stage) or DEFAULT_STAGES.get(step.name)
        known = phases.discover(self.store.task_dir)
        update_config(self.store.task_dir, stage=stage, total=len(known), completed=len(self.state.phases_completed),
                      current=frame.phase, current_status=step.name)

    def _end(self, status: str, reason: str, waiting: dict[str, str] | None = None) -> int:
        code = STATUS_EXIT[status]
        self.state.status, self.state.reason, self.state.waiting = status, reason, waiting
        self.store.finish(self.state)  # saves, then renders .pipeline-state.md once
        if status == "COMPLETE":
            update_config(self.store.task_dir, stage="complete", current=None, current_status="complete",
                          completed=len(self.state.phases_completed))
        self.events.emit("run_finished", task=self.task, status=status, exit_code=code, reason=reason,
                         usage=self.state.usage)
        return code
