"""How long each finished step of a task took, for the per-step bars of `specd status TASK` in a terminal."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import existing_task


def seconds_between(start: Any, end: Any) -> float:
    """Seconds from one saved timestamp to another; 0 when either is missing or unreadable."""
    try:
        begin = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        finish = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (finish - begin).total_seconds())


def step_seconds(project: Project, task: str) -> list[float]:
    """One figure per history row, in the order `specd status` lists the rows."""
    state = StateStore(existing_task(project, task), task).load()
    return [seconds_between(row.get("started_at"), row.get("finished_at")) for row in (state.history if state else [])]
