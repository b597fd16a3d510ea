"""Which tasks this clone submitted to Temporal, and where: so `specd approve/reject/skip/cancel/status TASK`
know, without flags, that the task's truth is a workflow. Kept in the repository's git folder (machine-local,
never committed), and it holds the address, namespace, task queue and remote only: never TLS or a key.
Another clone finds the same workflow by its id; there a flag, SPECD_TEMPORAL_ADDRESS or config.json says where.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specd.tasks.project import Project, read_settings

if TYPE_CHECKING:
    from specd.executors.temporal.settings import Settings

NAME = "specd-temporal.json"


def _path(project: Project) -> Path | None:
    """The record in the repository's common git folder, found without starting git (or importing specd.git):
    `status` and the answers look here on every call. Git finds its repository the same way, walking up from
    the project to the nearest ``.git``; only when a GIT_* variable changes that search is git asked."""
    if any(name in os.environ for name in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES")):
        from specd.git.repo import git

        done = git(project.root, "rev-parse", "--path-format=absolute", "--git-common-dir")
        return Path(done.stdout.strip()) / NAME if done.returncode == 0 and done.stdout.strip() else None
    for dot in _chain(project):
        if dot.is_dir():
            return dot / NAME
        if dot.is_file():  # a linked worktree: "gitdir: <its folder>", whose commondir names the shared one
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            own = (dot.parent / text[len("gitdir:"):].strip()).resolve()
            common = own / "commondir"
            return ((own / common.read_text(encoding="utf-8").strip()).resolve() if common.is_file() else own) / NAME
    return None


def watched(project: Project) -> list[Path]:
    """Every path that decides what the record says: the ``.git`` entries looked at, nearest first, and the
    record itself. A cache of `status TASK` watches them (a `git init` above the project moves the record)."""
    where = _path(project)
    return [*_chain(project), *([where] if where else [])]


def _chain(project: Project) -> list[Path]:
    found = []
    for folder in (project.root, *project.root.parents):
        found.append(folder / ".git")
        if os.path.lexists(found[-1]):
            break
    return found


def load(project: Project) -> dict[str, dict[str, Any]]:
    path = _path(project)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(project: Project, settings: Settings, tasks: list[str]) -> None:
    path = _path(project)
    if path is None or not tasks:
        return
    data = load(project)
    where = {"address": settings.address, "namespace": settings.namespace, "task_queue": settings.task_queue,
             "remote": settings.remote}
    data.update(dict.fromkeys(tasks, where))
    from specd.state.atomic import write_json

    write_json(path, data)


def where(project: Project, task: str) -> dict[str, Any]:
    found = load(project).get(task)
    return found if isinstance(found, dict) else {}


def maybe_in_use(project: Project, task: str | None, flags: dict[str, Any]) -> bool:
    """Whether Temporal may hold ``task``'s truth: a flag, a ``SPECD_TEMPORAL_*`` variable, this clone's record
    or config.json names it. False means the settings need not be worked out (nor their module imported, a
    tenth of `specd status TASK`'s start-up); True only that they must be."""
    return (any(value not in (None, "") for value in flags.values())
            or any(name.startswith("SPECD_TEMPORAL_") for name in os.environ)
            or (task is not None and bool(where(project, task))) or "temporal" in read_settings(project))



def lives_here(project: Project, task: str) -> bool:
    """Whether the task's home is recorded and is not Temporal: a task this clone once submitted, then cancelled
    there and moved here (its home record deleted, then `specd continue`). Its copy here is then its truth,
    whatever this clone's record of submissions or the environment's Temporal settings say."""
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
