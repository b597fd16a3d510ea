"""Setting up one `specd continue`: lock, state, agent, mode; then hand over to the brain."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from specd import git
from specd.agents.base import AgentContext, Budget, Usage
from specd.engine import answers, notices, parking
from specd.engine.brain import Brain
from specd.engine.dispatch import Dispatcher
from specd.engine.jail_line import committed_secrets, first_line
from specd.engine.modes import human_present, resolve_mode
from specd.engine.step_agent import StepAgents
from specd.engine.waiting import answers_text, held, hint, release_if_gone, what
from specd.errors import ConfigError, TaskError, Waiting
from specd.events import EventBus
from specd.git import identity
from specd.git.reporting import ReportingAgent
from specd.git.shared_tree import TreeLock
from specd.human import Human, NoHuman
from specd.notify.spec import notify_spec
from specd.pipeline import cursor, load_pipeline, replan
from specd.pipeline.model import PipelineConfig
from specd.pipeline.resolve import pipeline_warnings
from specd.state.lock import TaskLock
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.system import children, machine
from specd.tasks import home
from specd.tasks.derive import derive, seed_cursor
from specd.tasks.project import ORCHESTRATOR_NOTE, Project, is_orchestrator, read_settings
from specd.tasks.secrets import load_project_secrets
from specd.tasks.task import existing_task, read_config

BUDGET_KEYS = ("max_cost_usd", "max_tokens", "max_step_cost_usd", "max_step_tokens")


STEPS = "SPECD_STEPS"  # N: the run stops IN_PROGRESS once N steps ran (a Temporal worker runs one per activity)
Why = tuple[str, str, dict[str, Any] | None]  # the status a run ended in, its reason, and what it waits for


def run(project: Project, task: str, *, mode_flag: str | None, agent_spec: str | None,
        human_for: Callable[[str], Human], events: EventBus, max_cost: float | None = None,
        approve: str | None = None) -> Why:
    """Run ``task`` (through ``specd.engine.seam.run_task``); ``approve`` (a note, maybe empty) answers a waiting
    run first, as `specd approve` would (only `specd continue --approve` passes it: an answer from the command
    line, by this project's git identity)."""
    load_project_secrets(project.root, dependencies=True)  # masked before anything the run prints or writes
    if is_orchestrator(read_settings(project)):
        raise ConfigError(f"{project.config_file}: {ORCHESTRATOR_NOTE}",
                          fix=f"cd into a sub-project and run `specd continue {task}` there")
    task_dir = existing_task(project, task)
    read_config(task_dir)  # a config.json that does not load is bad input before anything is said or written
    config = load_pipeline(project)
    notify_to = notify_spec(project, config)  # a bad `notify:` block is bad input before anything runs
    kind, line = first_line(config)  # the jail in force, before anything else is said or run
    events.emit(kind, message=line)
    for said in committed_secrets(project.root):
        events.emit("warning", message=said)
    for warning in pipeline_warnings(config, project):
        events.emit("warning", message=warning)
    store = StateStore(task_dir, task)
    with TaskLock(task_dir, task) as lock, children.tracked_by(lock), home.runner(project, task), \
            _sigterm_as_interrupt():
        _report_leftovers(lock, events)
        state = store.load()
        if state is not None and state.status == "COMPLETE":
            git.commit_finished(project, task, task_dir, events)  # finished means committed, kill -9 or not
            events.emit("notice", message=f"task {task!r} is already complete; nothing to do (`specd rerun {task} "
                                          "--from STEP` runs steps again)")
            return "COMPLETE", "already complete", None
        _refuse_final(task, state)
        lapsed = release_if_gone(state, config) if state is not None else None
        if lapsed:
            events.emit("notice", message=lapsed)
        mode, agent_spec, max_cost = _settings(state, config, mode_flag, agent_spec, max_cost, events)
        if state is not None and approve is not None and held(state):
            origin = identity.here("cli", project.root)
            events.emit("notice", message=answers.answer(state, config, "approve", approve, origin))
            store.save(state)
        if state is not None and held(state) and not _answerable_now(state, mode, max_cost):
            raise Waiting(f"task {task!r} is waiting for {what(state)}; nothing ran. Answer with "
                          + answers_text(task), fix=hint(task, state))
        events.subscribe(store.journal.listener)
        human = human_for(mode) if human_present(mode) else NoHuman()
        resumed = state is not None
        if state is None:
            state = _first_state(task, task_dir, config, events)
            if state is None:
                return "COMPLETE", "complete according to its files", None
        _prepare(state, config, mode, events)
        state.agent, state.max_cost = agent_spec, max_cost
        limits = _limits(config, max_cost)
        store.budgets = {k: v for k, v in limits.__dict__.items() if k in BUDGET_KEYS}
        agents = StepAgents(agent_spec, AgentContext(human, events), project.root)  # one per step block (issue 30)
        agent = agents.first(config)
        agents.check_caps(config, limits)  # each step's caps against its own agent

        def budget() -> Budget:
            return replace(limits, run_spent=Usage.from_dict(state.usage))

        dispatcher = Dispatcher(project, task, task_dir, config, agent, mode, state.run_id, budget, agents=agents)
        recorder = git.attach(project, task, task_dir, events)
        if recorder is not None:
            recorder.barrier.approve(answers.answered_files(state, "approve"))  # before run_started: it commits them
            recorder.barrier.reject(answers.answered_files(state, "reject"))  # still there as they were: held again
            agents.wrap = lambda built: ReportingAgent(built, recorder)
            dispatcher.agent = ReportingAgent(agent, recorder)
            dispatcher.extra = lambda step, phase: git.phase_context(project.root, task_dir, phase)
        events.emit("run_started", task=task, run_id=state.run_id, mode=mode, resumed=resumed,
                    agent=getattr(agent, "name", "agent"))
        store.save(state)
        brain = Brain(project, task, config, mode, human, events, store, dispatcher, limits)
        brain.steps = _steps_allowed()
        parked = parking.from_env(brain.steps is not None)  # taken out of the environment either way
        brain.parks = parked is not None
        if recorder is not None:
            brain.secrets = recorder.barrier.waits
            brain.tree = TreeLock(recorder.repo.git_dir or recorder.repo.common_dir, task,
                                  lambda message: events.emit("notice", message=message))
        try:
            brain.run(state)
            while parked is not None and state.status == "IN_PROGRESS" and parked.wait(
                    lambda: events.emit("run_parked", task=task, run_id=state.run_id)):  # handed the next step
                events.emit("run_resumed", task=task, run_id=state.run_id)
                brain.run(state)
            notices.notify(notify_to, task, state, root=project.root, task_dir=task_dir, events=events,
                           save=lambda: store.save(state))
            return state.status, state.reason, state.waiting
        except OSError as exc:  # disk full, read-only: recorded while the lock is still ours
            error = machine.stop_run(exc, store, task)
            if error is None:
                raise
            raise error from None


def _steps_allowed() -> int | None:
    """SPECD_STEPS, taken out of the environment: nothing the run starts (an agent, a hook) inherits it."""
    raw = os.environ.pop(STEPS, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def _report_leftovers(lock: TaskLock, events: EventBus) -> None:
    if lock.stopped:
        events.emit("notice", message=f"stopped {len(lock.stopped)} process(es) left running by the interrupted "
                                      f"run (pids {', '.join(map(str, lock.stopped))}) before resuming")
    if lock.swept:
        events.emit("notice", message=f"removed {len(lock.swept)} scratch file(s) left by the interrupted run")


def _refuse_final(task: str, state: RunState | None) -> None:
    if state is not None and state.status == "FAILED":
        raise TaskError(f"task {task!r} FAILED: {state.reason}", fix=f"`specd retry {task}` runs the failed step "
                        f"again, or `specd rerun {task} --from STEP` starts again from an earlier step")
    if state is not None and state.status == "CANCELLED":
        raise TaskError(f"task {task!r} was cancelled", fix=f"`specd rerun {task} --from STEP` starts it again "
                        "from a step")


def _answerable_now(state: RunState, mode: str, max_cost: float | None) -> bool:
    """A held wait stays held, except where the answer comes with this very run: a person at the
    gate (interactive, semi-auto), or --max-cost raised past what a budget wait hit."""
    wait = state.waiting or {}
    if wait.get("kind") == "gate":
        return human_present(mode)
    if wait.get("kind") == "budget" and max_cost is not None:
        return max_cost > float(wait.get("max_cost_usd") or 0) and max_cost > float(wait.get("spent_usd") or 0)
    return False


def _settings(state: RunState | None, config: PipelineConfig, mode_flag: str | None, agent_spec: str | None,
              max_cost: float | None, events: EventBus) -> tuple[str, str | None, float | None]:
    """The run remembers its mode, agent and --max-cost; a flag overrides them, and says so."""
    if state is None:
        return resolve_mode(mode_flag, config.mode), agent_spec, max_cost
    for flag, given, saved in (("mode", mode_flag, state.mode), ("--agent", agent_spec, state.agent),
                               ("--max-cost", max_cost, state.max_cost)):
        if given is not None and saved is not None and given != saved:
            events.emit("notice", message=f"{flag} {given} replaces this run's saved {saved}")
    mode = resolve_mode(mode_flag or state.mode, config.mode)
    return mode, agent_spec if agent_spec is not None else state.agent, max_cost if max_cost is not None else \
        state.max_cost


def _first_state(task: str, task_dir: Path, config: PipelineConfig, events: EventBus) -> RunState | None:
    """A task specd has never run starts where its files put it (specdacular's routing), not at step one."""
    position = derive(task_dir, read_config(task_dir), config)
    if position.complete:
        events.emit("notice", message=f"task {task!r} is already complete according to its files "
                                      f"({position.reason}); nothing to do")
        return None
    state = RunState(task=task, pipeline_source=str(config.source), pipeline_digest=config.digest,
                     cursor=seed_cursor(config, position), phases_completed=list(position.done))
    if state.cursor != cursor.start(config) or position.done:
        where = f"{position.step}" + (f" (phase {position.phase})" if position.phase else "")
        events.emit("notice", message=f"no specd run yet; starting at {where} because {position.reason}")
        state.notes.append(f"position derived from the task's files: {where} ({position.reason})")
    return state


def _prepare(state: RunState, config: PipelineConfig, mode: str, events: EventBus) -> None:
    for notice in replan.replan(state, config):
        events.emit("notice", message=notice)
        state.notes.append(notice)
    if state.pipeline_digest != config.digest:
        state.notes.append(f"pipeline changed: {state.pipeline_digest} → {config.digest}")
    state.pipeline_digest, state.pipeline_source = config.digest, str(config.source)
    state.mode, state.status, state.reason, state.waiting = mode, "IN_PROGRESS", "", None
    state.answered = ""  # this run takes the decision up: the task is no longer answered and idle


def _limits(config: PipelineConfig, max_cost: float | None) -> Budget:
    values: dict[str, Any] = {k: config.agent.get(k) for k in BUDGET_KEYS}
    if max_cost is not None:
        values["max_cost_usd"] = max_cost
    return Budget(**values)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """`kill <pid>` gets the same care as Ctrl-C: stop the agent, save, exit 130."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
