"""Where a task lives: in the main tree, or in its own git worktree made by `specd run`.

A task run that way has a full checkout of branch ``specd/<task>`` at ``.specd/worktrees/<task>/``,
and its live folder (run state, lock, journal) is the one inside that checkout. Commands typed in
the main tree (approve, reject, skip, cancel, retry, logs, status) must act on that live folder,
not on the main tree's copy, which stays as it was when the branch was made.
"""

from __future__ import annotations

import os
from pathlib import Path

from specd.tasks.project import SPECD_DIR, Project

WORKTREES = "worktrees"


def worktree_root(project: Project, task: str) -> Path:
    return project.specd_dir / WORKTREES / task


def branch(task: str) -> str:
    return f"specd/{task}"


def locate(project: Project, task: str) -> Project:
    """The worktree's project when the task's live folder is there, else ``project`` itself."""
    root = worktree_root(project, task)
    if (root / SPECD_DIR / "tasks" / task / "config.json").is_file():
        return Project(root)
    return project


def in_worktrees(project: Project) -> set[str]:
    """Tasks that live in a worktree now: one listing of the worktrees folder, so `status` stays cheap."""
    try:
        entries = os.scandir(project.specd_dir / WORKTREES)
    except OSError:
        return set()
    with entries:
        return {entry.name for entry in entries
                if entry.is_dir() and Path(entry.path, SPECD_DIR, "tasks", entry.name, "config.json").is_file()}
