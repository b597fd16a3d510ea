"""Where a task stands, as plain data: for `specd status` tables and `--json`."""

from __future__ import annotations

import os
from typing import Any

from specd import cursor, phases
from specd.derive import Derived, derive, seed_cursor
from specd.errors import SpecdError
from specd.pipeline import load_pipeline
from specd.pipeline.model import PipelineConfig
from specd.project import ORCHESTRATOR_NOTE, Project, is_orchestrator, read_settings
from specd.state.lock import TaskLock, read_owner
from specd.state.model import Frame, RunState
from specd.state.store import StateStore
from specd.task import existing_task, list_tasks, read_config

STALL_SECONDS = 120.0


def task_status(project: Project, task: str, config: PipelineConfig | None = None) -> dict[str, Any]:
    task_dir = existing_task(project, task)
    store = StateStore(task_dir, task)
    state = store.load()
    config = config or load_pipeline(project)
    task_config = read_config(task_dir)
    view: dict[str, Any] = {"task": task, "status": "NOT_STARTED", "stage": task_config.get("stage"),
                            "folder": project.rel(task_dir)}
    known = phases.discover(task_dir)
    if state is None:
        position = derive(task_dir, task_config, config, known)
        _describe_derived(view, position, config)
        probe = RunState(task=task, cursor=seed_cursor(config, position), phases_completed=list(position.done))
    else:
        probe = state
    try:
        # A probe built here is thrown away, so it can be moved itself; the real state is only peeked at.
        move = cursor.settle if state is None else cursor.peek
        pos = move(probe, config, lambda after: phases.next_phase(task_dir, after))
    except (KeyError, IndexError, cursor.NoPhases):
        pos = None  # no phases yet, or the pipeline changed under the run; `continue` explains
    nxt: dict[str, Any] | None = None
    if pos is not None:
        nxt = {"step": pos.step.name, "pipeline": pos.frame.pipeline, "phase": pos.frame.phase}
    if state is not None and state.current is not None:
        cur = state.current
        nxt = {"step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase, "resume_after": cur.completed}
    view["next"] = None if view["status"] == "COMPLETE" or (state and state.status == "COMPLETE") else nxt
    if state is None:
        view.update(history=[], usage={}, phases=[p.id for p in known])
        return view
    view.update(
        status=state.status, reason=state.reason, waiting=state.waiting, run_id=state.run_id, mode=state.mode,
        started_at=state.started_at, updated_at=state.updated_at, usage=state.usage,
        history=[{k: h.get(k) for k in ("step", "pipeline", "phase", "kind", "hook", "outcome", "summary",
                                        "usage", "finished_at", "artifacts")} for h in state.history],
        failures=state.failures[-5:], phases=[p.id for p in known], phases_completed=state.phases_completed,
    )
    view["running"] = _running(store, task_dir, task, view)
    return view


def _describe_derived(view: dict[str, Any], position: Derived, config: PipelineConfig) -> None:
    """A task specd has not run yet: say where its files put it (specdacular's routing)."""
    view["derived"] = {"step": position.step, "pipeline": position.pipeline, "phase": position.phase,
                       "complete": position.complete, "phases_done": list(position.done), "why": position.reason}
    if position.complete:
        view["status"] = "COMPLETE"
        view["status_note"] = f"complete according to its files ({position.reason}); specd has not run it"
    elif seed_cursor(config, position) != [Frame("main")] or position.done:
        view["status"] = "IN_PROGRESS"
        view["status_note"] = (f"no specd run yet; its files say {position.reason}, so `specd continue` starts at "
                               f"{position.step}" + (f" (phase {position.phase})" if position.phase else ""))


def _running(store: StateStore, task_dir: Any, task: str, view: dict[str, Any]) -> dict[str, Any] | None:
    """Tell a live run from a dead one: the lock says alive, the heartbeat says progressing."""
    lock = TaskLock(task_dir, task)
    if not lock.is_held():
        if view["status"] == "IN_PROGRESS":
            view["status_note"] = "no specd process is running it (interrupted or killed); `specd continue` resumes"
        return None
    owner = read_owner(lock.owner_path) or {}
    age = store.heartbeat_age()
    stalled = age is not None and age > float(os.environ.get("SPECD_STALL_SECONDS", STALL_SECONDS))
    if stalled:
        view["status_note"] = f"stalled: no heartbeat for {age:.0f} s"
    return {"pid": owner.get("pid"), "heartbeat_age_s": age, "stalled": stalled}


def project_notes(project: Project) -> list[str]:
    """What `specd status` should say about the project as a whole."""
    return [ORCHESTRATOR_NOTE] if is_orchestrator(read_settings(project)) else []


def all_status(project: Project) -> list[dict[str, Any]]:
    config = load_pipeline(project)
    rows = []
    for task in list_tasks(project):
        try:
            rows.append(task_status(project, task, config))
        except SpecdError as exc:
            rows.append({"task": task, "status": "ERROR", "reason": str(exc), "next": None})
    return rows
