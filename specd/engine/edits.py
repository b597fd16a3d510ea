"""The pipeline file edited while a run goes on: from the next step, the run follows the file as it is now.

Between two steps the pipeline files' stats are compared with what the run saw (three ``stat`` calls, whatever
the run's length); when they moved and the content did too, the file is loaded again and the run's position
re-planned as a new run would (``replan``): nothing finished runs again, nothing unrun is skipped silently.
An agent cannot be the one who edited it: the jail keeps the file read-only to the agent, and outside the jail
the machinery check has already put back what a step wrote. An edit that does not load stops the run BLOCKED,
naming the file and the fix, and what the run did so far stays recorded.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import SpecdError
from specd.events import EventBus
from specd.pipeline import load_pipeline, replan
from specd.pipeline.load import NAMES
from specd.pipeline.model import PipelineConfig
from specd.state.model import RunState
from specd.tasks.project import Project

Marks = tuple[tuple[int, int, int] | None, ...]


class Broken(Exception):
    """The edited pipeline file does not load; the message names the file, the place and the fix."""


def marks(project: Project) -> Marks:
    return tuple(_mark(project.specd_dir / name) for name in NAMES)


def follow(project: Project, state: RunState, config: PipelineConfig, seen: Marks,
           events: EventBus) -> tuple[PipelineConfig, Marks]:
    """The pipeline the next step follows, and the marks it was read at."""
    now = marks(project)
    if now == seen:
        return config, seen
    try:
        edited = load_pipeline(project)
    except SpecdError as exc:
        raise Broken(f"the pipeline was edited during the run and no longer loads: {exc}") from None  # its fix once
    if edited.digest == config.digest:
        return config, now
    for notice in replan.replan(state, edited, since="the last step; the next step follows it"):
        events.emit("notice", message=notice)
        state.notes.append(notice)
    state.notes.append(f"pipeline changed during the run: {state.pipeline_digest} → {edited.digest}")
    state.pipeline_digest, state.pipeline_source = edited.digest, str(edited.source)
    return edited, now


def _mark(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino
