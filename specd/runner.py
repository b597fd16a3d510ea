"""Setting up one `specd continue`: lock, state, agent, mode; then hand over to the brain."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from specd import git
from specd.agents.base import AgentContext, Budget, Usage
from specd.agents.factory import make_agent
from specd.brain import Brain
from specd.derive import derive, seed_cursor
from specd.dispatch import Dispatcher
from specd.errors import ConfigError, TaskError
from specd.events import EventBus
from specd.human import Human, NoHuman
from specd.modes import human_present, resolve_mode
from specd.pipeline import load_pipeline
from specd.pipeline.model import PipelineConfig
from specd.project import ORCHESTRATOR_NOTE, Project, is_orchestrator, read_settings
from specd.state.lock import TaskLock
from specd.state.model import Frame, RunState
from specd.state.store import StateStore
from specd.task import existing_task, read_config

BUDGET_KEYS = ("max_cost_usd", "max_tokens", "max_step_cost_usd", "max_step_tokens")


def run_task(project: Project, task: str, *, mode_flag: str | None, agent_spec: str | None,
             human_for: Callable[[str], Human], events: EventBus, max_cost: float | None = None) -> int:
    if is_orchestrator(read_settings(project)):
        raise ConfigError(f"{project.config_file}: {ORCHESTRATOR_NOTE}",
                          fix=f"cd into a sub-project and run `specd continue {task}` there")
    task_dir = existing_task(project, task)
    config = load_pipeline(project)
    for warning in config.warnings:
        events.emit("warning", message=warning)
    mode = resolve_mode(mode_flag, config.mode)
    human = human_for(mode) if human_present(mode) else NoHuman()
    store = StateStore(task_dir, task)
    events.subscribe(store.journal.listener)
    with TaskLock(task_dir, task), _sigterm_as_interrupt():
        state = store.load()
        if state is not None and state.status == "COMPLETE":
            events.emit("notice", message=f"task {task!r} is already complete; nothing to do")
            return 0
        resumed = state is not None
        if state is None:
            state = _first_state(task, task_dir, config, events)
            if state is None:
                return 0
        _prepare(state, config, mode, events)
        limits = _limits(config, max_cost)
        store.budgets = {k: v for k, v in limits.__dict__.items() if k in BUDGET_KEYS}
        agent = make_agent(agent_spec, config.agent, AgentContext(human, events), project.root)

        def budget() -> Budget:
            return replace(limits, run_spent=Usage.from_dict(state.usage))

        dispatcher = Dispatcher(project, task, task_dir, config, agent, mode, state.run_id, budget)
        if git.is_repo(project.root):
            events.subscribe(git.GitRecorder(project, task, task_dir, events))
            dispatcher.extra = lambda step, phase: git.phase_context(project.root, task_dir, phase)
        events.emit("run_started", task=task, run_id=state.run_id, mode=mode, resumed=resumed,
                    agent=getattr(agent, "name", "agent"))
        store.save(state)
        brain = Brain(project, task, config, mode, human, events, store, dispatcher, limits)
        return brain.run(state)


def _first_state(task: str, task_dir: Path, config: PipelineConfig, events: EventBus) -> RunState | None:
    """A task specd has never run starts where its files put it (specdacular's routing), not at step one."""
    position = derive(task_dir, read_config(task_dir), config)
    if position.complete:
        events.emit("notice", message=f"task {task!r} is already complete according to its files "
                                      f"({position.reason}); nothing to do")
        return None
    state = RunState(task=task, pipeline_source=str(config.source), pipeline_digest=config.digest,
                     cursor=seed_cursor(config, position), phases_completed=list(position.done))
    if state.cursor != [Frame("main")] or position.done:
        where = f"{position.step}" + (f" (phase {position.phase})" if position.phase else "")
        events.emit("notice", message=f"no specd run yet; starting at {where} because {position.reason}")
        state.notes.append(f"position derived from the task's files: {where} ({position.reason})")
    return state


def _prepare(state: RunState, config: PipelineConfig, mode: str, events: EventBus) -> None:
    waiting = state.waiting or {}
    if waiting.get("kind") == "max_visits" and state.cursor:
        state.cursor[-1].visits[waiting["step"]] = 0  # the human has looked; allow another round
        state.notes.append(f"max_visits reset for {waiting['step']} on resume")
    if state.pipeline_digest and state.pipeline_digest != config.digest:
        events.emit("notice", message="the pipeline file changed since this run started; continuing from the "
                                      "same position in the new pipeline")
        state.notes.append(f"pipeline changed: {state.pipeline_digest} → {config.digest}")
    for frame in state.cursor:
        if frame.pipeline not in config.pipelines or frame.index > len(config.pipelines[frame.pipeline]):
            raise TaskError(
                f"the run's position ({frame.pipeline}[{frame.index}]) does not exist in {config.source}",
                fix="restore the removed steps, or move .pipeline-state.json aside to start the task's run over")
    state.pipeline_digest, state.pipeline_source = config.digest, str(config.source)
    state.mode, state.status, state.reason, state.waiting = mode, "IN_PROGRESS", "", None


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
