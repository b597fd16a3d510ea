"""Which tasks this clone submitted to Temporal, and where: so `specd approve/reject/skip/cancel/status TASK`
know, without flags, that the task's truth is a workflow. Kept in the repository's git folder (machine-local,
never committed), and it holds the address, namespace, task queue and remote only: never TLS or a key; it is
read by ``specd.tasks.submitted`` (where a task lives needs it too) and written here.
Another clone finds the same workflow by its id; there a flag, SPECD_TEMPORAL_ADDRESS or config.json says where.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from specd.tasks.project import Project, read_settings
from specd.tasks.submitted import NAME as NAME
from specd.tasks.submitted import load as load
from specd.tasks.submitted import path as _path
from specd.tasks.submitted import watched as watched
from specd.tasks.submitted import where as where

if TYPE_CHECKING:
    from specd.executors.temporal.settings import Settings


def save(project: Project, settings: Settings, tasks: list[str], key: str = "") -> None:
    """Note where ``tasks`` were submitted (with ``key``, the repository's: each one's workflow id too)."""
    path = _path(project)
    if path is None or not tasks:
        return
    data = load(project)
    where = {"address": settings.address, "namespace": settings.namespace, "task_queue": settings.task_queue,
             "remote": settings.remote}
    from specd.executors.temporal.ids import workflow_id

    data.update({task: {**where, **({"workflow_id": workflow_id(key, task)} if key else {})} for task in tasks})
    from specd.state.atomic import write_json

    write_json(path, data)


def maybe_in_use(project: Project, task: str | None, flags: dict[str, Any]) -> bool:
    """Whether Temporal may hold ``task``'s truth: a flag, a ``SPECD_TEMPORAL_*`` variable, this clone's record
    or config.json names it. False means the settings need not be worked out (nor their module imported, a
    tenth of `specd status TASK`'s start-up); True only that they must be."""
    return (any(value not in (None, "") for value in flags.values())
            or any(name.startswith("SPECD_TEMPORAL_") for name in os.environ)
            or (task is not None and bool(where(project, task))) or "temporal" in read_settings(project))


def lives_here(project: Project, task: str) -> bool:
    """Whether the task's home is recorded and is not Temporal: a task this clone once submitted, then brought
    here (`specd run TASK --move`, or `specd land TASK`). Its copy here is then its truth, whatever this clone's
    record of submissions or the environment's Temporal settings say."""
    kind = _home_kind(project, task)
    return kind is not None and kind != "temporal"


def on_temporal(project: Project, task: str) -> bool:
    """Whether the task lives on Temporal as far as this clone knows: its home says so, or this clone submitted
    it and no home was recorded (a submission by a specd from before homes)."""
    kind = _home_kind(project, task)
    return kind == "temporal" if kind is not None else bool(where(project, task))


def _home_kind(project: Project, task: str) -> str | None:
    """The kind of the task's recorded home; None when none is recorded, or when its record cannot be read (the
    verbs that use it say what is wrong with it)."""
    from specd.errors import SpecdError
    from specd.tasks import home

    try:
        found = home.read(project, task)
    except SpecdError:
        return None
    return found.kind if found is not None else None
