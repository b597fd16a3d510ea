"""Where a task lives: in the main tree, or in its own git worktree made by `specd run`, as its home says.

A task run in a worktree has a full checkout of branch ``specd/<task>`` at ``.specd/worktrees/<task>/``,
and its live folder (run state, lock, journal) is the one inside that checkout. Commands typed in
the main tree (approve, reject, skip, cancel, retry, logs, status) must act on that live folder,
not on the main tree's copy, which stays as it was when the branch was made. The task's home record
(``home.py``) says which of the two it is; a worktree holding the task is no proof it lives there.
"""

from __future__ import annotations

import os
from pathlib import Path

from specd.errors import SpecdError
from specd.tasks import home
from specd.tasks.project import SPECD_DIR, Project

WORKTREES = "worktrees"


def worktree_root(project: Project, task: str) -> Path:
    return project.specd_dir / WORKTREES / task


def worktree_folder(project: Project, task: str) -> Path:
    """The task's folder in its worktree, where a task that lives there keeps its run."""
    return worktree_root(project, task) / SPECD_DIR / "tasks" / task


def branch(task: str) -> str:
    return f"specd/{task}"


def locate(project: Project, task: str) -> Project:
    """The project holding the task's one live copy. Inside a task's worktree (a run's child, or
    ``--project`` given), that worktree itself. A task in two places is refused (``home.TwoCopies``)."""
    main = home.main_of(project)
    if main != project:
        return project
    return home.project_of(main, task, home.current(main, task))


def in_worktrees(project: Project) -> set[str]:
    """Tasks that live in a worktree now: one listing of the worktrees folder, so `status` stays cheap."""
    try:
        entries = os.scandir(project.specd_dir / WORKTREES)
    except OSError:
        return set()
    with entries:
        found = {entry.name for entry in entries
                 if entry.is_dir() and (worktree_folder(project, entry.name) / "config.json").is_file()}
    # A worktree left from before a task was homed in the main tree is not where it lives.
    return {task for task in found if _home_kind(project, task) != "main"}


def _home_kind(project: Project, task: str) -> str:
    try:
        found = home.read(project, task)
    except SpecdError:
        return ""  # a broken record: shown from the worktree, and the verbs name the file to fix
    return "" if found is None else found.kind
