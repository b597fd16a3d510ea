"""Where a task stands, as plain data: for `specd status` tables and `--json`."""

from __future__ import annotations

import os
from typing import Any

from specd import cursor, phases
from specd.errors import SpecdError
from specd.machine import interrupted_reason
from specd.pipeline import load_pipeline
from specd.pipeline.model import PipelineConfig
from specd.project import Project
from specd.state.lock import TaskLock, read_owner
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.task import existing_task, list_tasks, read_config

STALL_SECONDS = 120.0


def task_status(project: Project, task: str, config: PipelineConfig | None = None) -> dict[str, Any]:
    task_dir = existing_task(project, task)
    store = StateStore(task_dir, task)
    state = store.load()
    config = config or load_pipeline(project)
    view: dict[str, Any] = {"task": task, "status": "NOT_STARTED", "stage": read_config(task_dir).get("stage")}
    probe = state or RunState(task=task)
    try:
        pos = cursor.peek(probe, config, lambda after: phases.next_phase(task_dir, after))
    except (KeyError, IndexError, cursor.NoPhases):
        pos = None  # no phases yet, or the pipeline changed under the run; `continue` explains
    nxt: dict[str, Any] | None = None
    if pos is not None:
        nxt = {"step": pos.step.name, "pipeline": pos.frame.pipeline, "phase": pos.frame.phase}
    if state is not None and state.current is not None:
        cur = state.current
        nxt = {"step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase, "resume_after": cur.completed}
    view["next"] = None if state is not None and state.status == "COMPLETE" else nxt
    if state is None:
        view.update(history=[], usage={}, phases=_phases(task_dir))
        return view
    view.update(
        status=state.status, reason=state.reason, waiting=state.waiting, run_id=state.run_id, mode=state.mode,
        started_at=state.started_at, updated_at=state.updated_at, usage=state.usage,
        history=[{k: h.get(k) for k in ("step", "pipeline", "phase", "kind", "hook", "outcome", "summary",
                                        "usage", "finished_at", "artifacts")} for h in state.history],
        failures=state.failures[-5:], phases=_phases(task_dir), phases_completed=state.phases_completed,
    )
    view["running"] = _running(store, task_dir, task, view)
    return view


def _phases(task_dir: Any) -> list[str]:
    return [p.id for p in phases.discover(task_dir)]


def _running(store: StateStore, task_dir: Any, task: str, view: dict[str, Any]) -> dict[str, Any] | None:
    """Tell a live run from a dead one: the lock says alive, the heartbeat says progressing."""
    lock = TaskLock(task_dir, task)
    if not lock.is_held():
        if view["status"] == "IN_PROGRESS":
            why = interrupted_reason(store)  # set when the run could not save its own end (disk full, read-only)
            view["status_note"] = (f"interrupted: {why}" if why else "no specd process is running it "
                                   "(interrupted or killed); `specd continue` resumes")
        return None
    owner = read_owner(lock.owner_path) or {}
    age = store.heartbeat_age()
    stalled = age is not None and age > float(os.environ.get("SPECD_STALL_SECONDS", STALL_SECONDS))
    if stalled:
        view["status_note"] = f"stalled: no heartbeat for {age:.0f} s"
    return {"pid": owner.get("pid"), "heartbeat_age_s": age, "stalled": stalled}


def all_status(project: Project) -> list[dict[str, Any]]:
    config = load_pipeline(project)
    rows = []
    for task in list_tasks(project):
        try:
            rows.append(task_status(project, task, config))
        except SpecdError as exc:
            rows.append({"task": task, "status": "ERROR", "reason": str(exc), "next": None})
    return rows
