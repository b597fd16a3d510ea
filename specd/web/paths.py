"""What the dashboard may serve: the project's task folders and nothing else.

A task name in a URL must be a task name (so ``..``, ``/etc`` or a percent-encoded path is simply not found) of
a task the project has, whose folder really is under the tasks folder; a file inside it must resolve, symlinks
followed at every step of its path, to a place inside that task's folder.
Every refusal is the same 404 as a missing page: a stranger learns nothing from the difference.
"""

from __future__ import annotations

from pathlib import Path

from starlette.exceptions import HTTPException

from specd.errors import SpecdError
from specd.tasks import locate
from specd.tasks.project import Project
from specd.tasks.task import SLUG
from specd.web import temporal_rows


def task_home(project: Project, task: str) -> tuple[Project, Path]:
    """The project the task lives in now (its worktree while `specd run` runs it; for a task on Temporal, the copy
    its workers pushed) and its folder; else 404."""
    if not SLUG.match(task):  # one plain name: no "/", no leading "." (so never ".."), nothing encoded
        raise HTTPException(404)
    try:
        where = temporal_rows.pushed_copy(project, task) or locate.locate(project, task)
    except SpecdError as exc:  # a task in two places, a broken home record: said, never one copy picked
        raise HTTPException(409, detail=str(exc)) from None
    for root in (where.tasks_dir, where.features_dir):
        folder = root / task
        if (folder / "config.json").is_file() and inside(folder, root):
            return where, folder
    raise HTTPException(404)


def inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def task_file(folder: Path, relative: str) -> Path:
    """A file inside ``folder`` named by a URL; absolute paths, ``..`` and symlinks leading out are 404."""
    parts = Path(relative).parts
    if not relative or Path(relative).is_absolute() or ".." in parts or "\\" in relative or "\0" in relative:
        raise HTTPException(404)
    path = folder
    for part in parts:  # every step stays inside: a link out and back in is still a way out
        path = path / part
        if not inside(path, folder):
            raise HTTPException(404)
    if not path.is_file():
        raise HTTPException(404)
    return path
