"""What a local run reports and reads of each task: its settings, each task's result, a task's status from where
it runs, and which tasks a run takes on. Shared by `specd run`, the control plane, the page and the Temporal
submitter, which read tasks the same way (``local`` is the executor itself).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from specd.errors import ConfigError, TaskError
from specd.executors import worktrees
from specd.tasks import graph as graphs
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import FINAL, task_status
from specd.tasks.task import existing_task


@dataclass(frozen=True)
class Settings:
    jobs: int = max(2, os.cpu_count() or 2)
    mode: str | None = None
    agent: str | None = None
    max_cost: float | None = None
    keep_waiting: bool = False  # a task stopped on a held wait stays in the run until answered


@dataclass
class Result:
    task: str
    status: str
    reason: str = ""
    waiting_for: tuple[str, ...] = ()
    home: str = "worktree"  # "main": the task lives in the user's own tree, on no branch of its own; "temporal"
    elsewhere: bool = False  # another process ran it (this run left it to that one, or found it finished)
    run_by: int | None = None  # that process's pid, when known
    input_error: bool = False  # its run stopped on bad input (exit 2): the status is the task's own, unchanged

    @property
    def branch(self) -> str | None:
        return worktrees.branch(self.task) if self.home == "worktree" else None

    @property
    def bad_input(self) -> bool:
        """The task is reported with an error in what it was given (its files, the pipeline file, a missing key)."""
        return self.status == BROKEN or self.input_error


BROKEN = "BROKEN"  # a task whose own files do not load: reported with their fix, never run, never a stop for the rest


def current_status(project: Project, task: str, broken: dict[str, str] | None = None) -> str:
    """The task's status; with ``broken``, a task whose files do not load is BROKEN and its error kept there."""
    try:
        return str(task_status(tree_of(project, task), task, listing=True)["status"])
    except (TaskError, ConfigError) as exc:
        if broken is None:
            raise
        broken[task] = str(exc)
        return BROKEN


def targets(project: Project, names: list[str], graph: graphs.Graph,
            broken: dict[str, str] | None = None, known: dict[str, str] | None = None) -> list[str]:
    """The named tasks (checked) or, with none named, every unfinished task; ``known`` keeps each status read."""
    for name in names:
        existing_task(project, name)
    if names:
        return names
    known = {} if known is None else known
    for task in graph:
        known[task] = current_status(project, task, broken)
    return [t for t in graph if known[t] not in FINAL]


def mark_homes(project: Project, results: dict[str, Result]) -> dict[str, Result]:
    """Each result says where its task lives, so the summary names no branch for a task in the user's tree."""
    for task, result in results.items():
        try:
            found = home.read(project, task) or home.infer(project, task)
        except TaskError:
            continue  # a broken or doubled record: that task's result already says so
        if found is not None and found.kind in ("main", "temporal"):
            result.home = found.kind
    return results


def tree_of(project: Project, task: str) -> Project:
    """Where ``task`` runs; a recorded worktree that is gone (a kill came between its record and its making, or it
    was removed) counts as not made yet: `specd run` makes it again, from the task's branch when there is one."""
    try:
        return worktrees.task_project(project, task)
    except home.WorktreeGone:
        return project
