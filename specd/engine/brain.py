"""THE loop: cursor → gate → hooks → dispatch → outcome → advance → save.

State is saved before anything is dispatched and after it ends, so a crash
re-runs only the part that was interrupted (at least once), and a finished
part is never run again (recorded once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from specd.agents.base import AgentFailed, Budget, BudgetExhausted, Usage
from specd.engine import (
    check_rounds,
    checks,
    edits,
    gates,
    group,
    group_view,
    hook_stage,
    outputs,
    records,
    refusals,
    secret_hold,
    when,
)
from specd.engine.dispatch import Dispatcher
from specd.engine.failures import failure_stop
from specd.engine.loop import Stop
from specd.engine.machinery import Machinery, Tampered
from specd.engine.modes import needs_gate
from specd.engine.waiting import hint, no_phases, waiting
from specd.errors import STATUS_EXIT
from specd.events import EventBus
from specd.git.shared_tree import TreeLock
from specd.human import Human
from specd.pipeline import cursor, progress
from specd.pipeline.model import PipelineConfig, Step
from specd.state import checkpoint, rounds
from specd.state.model import STAGES, Current, Frame, RunState
from specd.state.store import Heartbeat, StateStore
from specd.tasks import handoff, phases
from specd.tasks.project import Project
from specd.tasks.task import DEFAULT_STAGES, update_config

DEFAULT_MAX_VISITS = 10  # with no max_visits, a loop still ends with a human, never forever


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
    tree: TreeLock | None = None  # steps of runs sharing a working tree take turns (git only)
    secrets: secret_hold.Holds | None = None  # files withheld from commits for a secret (git only)
    steps: int | None = None  # SPECD_STEPS: stop IN_PROGRESS once this many steps ran (a Temporal activity's one)
    parks: bool = False  # SPECD_PARK: having stopped so, the run waits to be handed the next step (parking.py)
    last: bool = field(default=False, init=False)  # this step is the last the run may take (``steps``)
    _synced: str | None = field(default=None, init=False)  # what config.json was last moved to
    _machinery: Machinery | None = field(default=None, init=False)  # checked around every step and hook
    _seen: edits.Marks | None = field(default=None, init=False)  # the pipeline files as this run last read them
    _step_saved: int | None = field(default=None, init=False)  # the store's save count after this visit's step

    def run(self, state: RunState) -> int:
        self.state = state
        self.dispatcher.facts = lambda phase, attempt: outputs.values(state, self.mode, phase, attempt)  # issue 30
        ran = 0
        try:
            while (pos := cursor.settle(state, self._follow(), self._next_phase)) is not None:
                frame, step = pos.frame, pos.step
                self._sync_config(frame, step)
                if not step.enabled:  # disabled steps run nothing, not even their hooks
                    self.events.emit("step_skipped", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                                     reason="disabled")
                    cursor.route(frame, self.config, step, "next")
                    continue
                cur = state.current
                if cur is None or (cur.step, cur.pipeline, cur.phase) != (step.name, frame.pipeline, frame.phase):
                    if when.skipped(self, frame, step, self.mode):  # `when:` is false (issue 30)
                        continue
                    cur = self._enter(frame, step)
                    if cur is None:
                        continue
                if self.steps is not None and ran >= self.steps:  # the next step entered, its gate asked
                    return self._pause(frame)
                self.last = self.steps is not None and ran + 1 >= self.steps  # its commit is the run's last
                if self.tree:  # held from the pre-dispatch save to the step's commit; released in _advance or _end
                    self.tree.hold()
                for stage in STAGES:  # what a stage records is saved before the next dispatch, or with the move
                    if stage not in cur.completed:
                        self._run_stage(stage, frame, step, cur)
                        if stage not in cur.completed:  # the step stage marks itself (see _run_step)
                            cur.completed.append(stage)
                        if "step" in cur.completed:  # a rejected step's files wait for its next run, not its hooks
                            secret_hold.check(self.secrets, self.task, frame, step)
                secret_hold.check(self.secrets, self.task, frame, step)  # a resumed step whose stages all ran
                self._advance(frame, step, cur)
                ran += 1
        except cursor.NoPhases as exc:
            return self._end("WAITING_FOR_HUMAN", no_phases(exc.step, self.task, self.project, self.store.task_dir),
                             {"kind": "no_phases", "step": exc.step})
        except Stop as stop:
            return self._end(stop.status, stop.reason, stop.waiting)
        except KeyboardInterrupt:
            if (reason := checkpoint.cancelled(self.state, self.store.task_dir)) is not None:  # `specd cancel`:
                return self._end("CANCELLED", reason)  # final, not resumable
            return self._end("ABORTED", f"interrupted; `specd continue {self.task}` re-runs the interrupted part")
        return self._end("COMPLETE", "")

    def _pause(self, frame: Frame) -> int:
        """The run ran the steps it was allowed: saved IN_PROGRESS at the next step (entered, none of its stages
        run), which the next `specd continue` resumes exactly there; ``run_finished`` names it."""
        self.store.finish(self.state)
        nxt = {"step": frame.step, "pipeline": frame.pipeline, "phase": frame.phase}
        self.events.emit("run_finished", task=self.task, status="IN_PROGRESS", exit_code=0, reason="", next=nxt,
                         usage=self.state.usage, hint=f"specd continue {self.task}", parked=self.parks)
        if self.tree:
            self.tree.release()
        return 0

    def _follow(self) -> PipelineConfig:
        """The pipeline as the next step must see it: the file may have been edited since the last step."""
        if self._seen is None:
            self._seen = edits.marks(self.project)
            return self.config
        try:
            self.config, self._seen = edits.follow(self.project, self.state, self.config, self._seen, self.events)
        except edits.Broken as exc:
            raise Stop("BLOCKED", str(exc)) from None
        self.dispatcher.config = self.config
        return self.config

    def _enter(self, frame: Frame, step: Step) -> Current | None:
        """A fresh visit: enforce max_visits, ask at the gate, then record that the step began."""
        visit = frame.visits.get(step.name, 0) + 1
        limit = step.max_visits or DEFAULT_MAX_VISITS
        if visit > limit:
            raise Stop("WAITING_FOR_HUMAN", f"step {step.name!r} reached max_visits ({limit}) in this iteration; "
                       f"`specd approve {self.task}` allows {limit} more visits of it in this iteration (and "
                       f"`specd skip {self.task}` goes on without it)", waiting("max_visits", frame, step, limit=limit))
        answer = gates.take_answer(self.state, frame, step)
        if answer is None and needs_gate(self.mode, step) and not gates.ask(self, frame, step):
            return None
        frame.visits[step.name] = visit
        self.state.current = Current(step.name, frame.pipeline, frame.phase, visit, note=(answer or {}).get("note")
                                     or "", snapshot=records.snapshot(self.store.task_dir))
        # Not saved yet: a crash before the first hook row or the pre-dispatch save just enters it again.
        return self.state.current

    def _run_stage(self, stage: str, frame: Frame, step: Step, cur: Current) -> None:
        conversation = f"{frame.pipeline}.{step.name}.{frame.phase or '-'}.v{cur.visit}"
        if stage == "step":  # a parallel group's members side by side (issue 30), else the step's own agent
            self._step_saved = None
            group.run(self, frame, step, cur, conversation) if step.group else self._run_step(
                frame, step, cur, conversation)
            self._step_saved = self.store.saves  # its last save holds its row and outcome (see _advance)
            return None
        if stage == rounds.KIND:
            return checks.run(self, frame, step, cur, lambda: self._run_step(frame, step, cur, conversation))
        failure = hook_stage.run(self, stage, frame, step, cur, conversation)
        if failure:
            self._fail(cur, failure, kind="hook")
        return None

    def _run_step(self, frame: Frame, step: Step, cur: Current, conversation: str) -> None:
        reason = self.dispatcher.budget().check(Usage())  # every backend, not only those that check per call
        if reason:
            self.budget_stop(reason, frame, step)
        cur.attempt += 1
        self.dispatcher.note = cur.note
        self.dispatcher.feedback = check_rounds.feedback(self.state, cur, step)  # the last failed check, if any
        self.store.save(self.state, settled=False)  # saved before dispatch: a crash now re-runs this step, once
        self.events.emit("step_started", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                         attempt=cur.attempt,
                         of=progress.step_of(self.state, self.config, len(phases.discover(self.store.task_dir))))
        marks = group_view.tree_marks(self.project.root, self.store.task_dir) if step.read_only else None
        try:
            with Heartbeat(self.store.heartbeat_path), self.machinery.watch(self.events, f"step {step.name!r}") as kept:
                result = refusals.dispatch(self, step, frame, cur, conversation, kept)  # until its output is valid
        except Tampered as exc:  # before anything else reads what it wrote
            self._fail(cur, f"step {step.name!r} {exc}", kind="step")
        except AgentFailed as exc:
            self.spend(exc.usage)
            self._fail(cur, f"step {step.name!r} failed: {exc.reason}", kind="step")
        except BudgetExhausted as exc:
            self.spend(exc.usage)
            self.budget_stop(exc.reason, frame, step, exc.next_call_usd)
        self.spend(result.usage)
        if marks is not None and (why := group_view.breach(self.project.root, self.store.task_dir, marks,
                                                           f"step {step.name!r}")):
            self._fail(cur, why, kind="step")  # read_only where no jail could hold it (issue 30)
        allowed = self.dispatcher.allowed(step)
        if result.outcome not in allowed:
            self._fail(cur, f"step {step.name!r} reported outcome {result.outcome!r}; allowed: {', '.join(allowed)}",
                       kind="step")
        cur.outcome, cur.summary = result.outcome, result.summary
        self.state.history.append(records.entry(
            cur, kind="step", outcome=result.outcome, summary=result.summary, usage=result.usage,
            artifacts=records.artifacts(cur.snapshot, self.store.task_dir),
            transcript=str(result.transcript) if result.transcript else None, **dict(result.data)))
        if result.data.get("warning"):  # e.g. the verdict file overruled the reported outcome
            self.events.emit("warning", step=step.name, message=str(result.data["warning"]))
        cur.completed.append("step")
        # Saved, not synced, for the step's commit (made on step_finished) to hold its row and outcome, so a
        # clone resumes after it; the move's save, which follows at once, makes both durable.
        self.store.save(self.state, durable=False)
        self.events.emit("step_finished", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                         outcome=result.outcome, summary=result.summary, usage=result.usage.as_dict(), last=self.last)

    def _advance(self, frame: Frame, step: Step, cur: Current) -> None:
        outcome = cur.outcome or "done"
        target = step.target(outcome)
        self.state.current = None
        if target == "fail":
            raise Stop("FAILED", f"step {step.name!r} ended with outcome {outcome!r}, routed to fail; "
                       f"`specd retry {self.task}` runs it again", waiting("fail", frame, step))
        if target != "repeat":
            cursor.finish(frame, step.name)
        cursor.route(frame, self.config, step, "next" if target == "stop" else target)
        if self._step_saved != self.store.saves:
            self.store.save(self.state)
        # Else nothing ran since the step's own save (no check, no post hook): resuming from that save only moves
        # on, as here, so the move is written with the next save (the next step's, before it dispatches, or the
        # run's end), one durable write a step instead of two. A kill -9 in between re-runs nothing.
        self._step_saved = None
        if self.tree:
            self.tree.release()
        if target == "stop":
            raise Stop("WAITING_FOR_HUMAN", f"step {step.name!r} ended with {outcome!r}, which needs a human: "
                       f"`specd approve {self.task}` goes on, `specd reject {self.task} --note TEXT` sends it back",
                       waiting("outcome", frame, step, outcome=outcome))

    def _fail(self, cur: Current, reason: str, *, kind: str) -> None:
        raise Stop(*failure_stop(self.state, cur, reason, kind=kind, task=self.task))  # BLOCKED, or held

    def budget_stop(self, reason: str, frame: Frame, step: Step, next_call: float = 0.0) -> None:
        spent = float(self.state.usage.get("cost_usd") or 0)
        raise Stop("WAITING_FOR_HUMAN", f"{reason}; raise the budget (agent.max_cost_usd / max_tokens in the "
                   f"pipeline file, then `specd approve {self.task}`), or `specd continue {self.task} --max-cost USD`",
                   waiting("budget", frame, step, spent_usd=spent, max_cost_usd=self.limits.max_cost_usd,
                           next_call_usd=next_call))

    @property
    def machinery(self) -> Machinery:
        if self._machinery is None:
            self._machinery = Machinery(self.project.root, self.store.task_dir)
        return self._machinery

    def spend(self, usage: Usage) -> None:
        self.state.usage = (Usage.from_dict(self.state.usage) + usage).as_dict()

    def _next_phase(self, after: str | None) -> phases.Phase | None:
        return phases.next_phase(self.store.task_dir, after)

    def _stage(self, step: Step) -> str | None:
        return step.stage or (step.workflow and self.dispatcher.workflow(step).stage) or DEFAULT_STAGES.get(step.name)

    def _sync_config(self, frame: Frame, step: Step) -> None:
        """config.json says, in specdacular's words, which step runs next: rewritten only when that answer
        moves, and once more when the run ends (the run state is what records each step)."""
        task_dir = self.store.task_dir
        stage, fields = handoff.before(self._stage(step), frame.phase, task_dir)
        key = repr((stage, sorted(fields.items()), len(self.state.phases_completed)))
        if key == self._synced:
            return
        self._synced = key
        known = phases.discover(task_dir)
        update_config(task_dir, stage=stage, total=handoff.total(known),
                      completed=handoff.completed(self.state.phases_completed), **fields)

    def _end(self, status: str, reason: str, wait: dict[str, Any] | None = None) -> int:
        code = STATUS_EXIT[status]
        self.state.status, self.state.reason, self.state.waiting = status, reason, wait
        self.store.finish(self.state)  # saves, then renders .pipeline-state.md once
        task_dir = self.store.task_dir
        if status == "COMPLETE":
            final, fields = handoff.finished(phases.discover(task_dir), self.state.phases_completed)
            update_config(task_dir, stage=final, **fields)
        elif ((at := self.state.current or (self.state.cursor[-1] if self.state.cursor else None)) and at.step
              and at.pipeline in self.config.pipelines and at.step in cursor.names(self.config, at.pipeline)):
            stage, fields = handoff.before(self._stage(self.config.step(at.pipeline, at.step)), at.phase, task_dir)
            update_config(task_dir, stage=stage, completed=handoff.completed(self.state.phases_completed), **fields)
        self.events.emit("run_finished", task=self.task, status=status, exit_code=code, reason=reason,
                         usage=self.state.usage, hint=hint(self.task, self.state))
        if self.tree:  # after the run's last commit: a failed step's changes are closed in it
            self.tree.release()
        return code
