"""Git integration: a commit per step, as specdacular does, holding only that step's own work.

- ``docs(<task>): starting <step>`` before a step, ``docs(<task>): <step> complete`` after;
- each commit adds explicit paths only (see ``recorder``); options in ``settings``;
- git calls are serialized per repository and checked (see ``repo``);
- each phase's start commit is recorded, so its review gets the phase's diff.
A machine with no git identity still gets commits, as "specd <specd@localhost>", with a warning.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from specd.events import EventBus
from specd.git.repo import FALLBACK_IDENTITY, Repo, git
from specd.tasks.project import Project
from specd.tasks.task import read_config

if TYPE_CHECKING:  # imported where a run attaches one: a module that only asks git something stays light
    from specd.git.recorder import GitRecorder

__all__ = ["FALLBACK_IDENTITY", "attach", "git", "is_repo", "phase_context"]


def is_repo(root: Path) -> bool:
    return Repo.open(root) is not None


def attach(project: Project, task: str, task_dir: Path, events: EventBus) -> GitRecorder | None:
    """A recorder listening to the run's events, or None outside a git repository."""
    from specd.git.recorder import GitRecorder
    from specd.git.settings import Settings, ensure_gitignore

    repo = Repo.open(project.root)
    if repo is None:
        return None
    try:
        recorder = GitRecorder(repo, Settings.load(project), task, task_dir, events)
    except ValueError:  # the task folder resolves outside the work tree (a symlink, say)
        events.emit("warning", message=f"{task_dir} is outside the git work tree {repo.top}; not committing")
        return None
    try:
        ensure_gitignore(project)
    except OSError as exc:
        events.emit("warning", message=f"could not update {project.specd_dir / '.gitignore'}: {exc}")
    events.subscribe(recorder)
    return recorder


def commit_finished(project: Project, task: str, task_dir: Path, events: EventBus, status: str = "COMPLETE") -> None:
    """A finished task's record (COMPLETE, or CANCELLED from outside any run), committed: the journaled work of
    its steps first (under their names, without the record), then ``run state STATUS``, which ends the task's
    branch. Run after a kill came between saving the record and committing it, or by `specd cancel`, whose
    record no run commits. Nothing to commit, nothing made."""
    quiet = EventBus(lambda event: events.emit(event.kind, **event.data) if event.kind in ("warning", "notice")
                     else None)
    if attach(project, task, task_dir, quiet) is None:
        return
    quiet.emit("run_started", task=task, resumed=True, finished=True)
    quiet.emit("run_finished", task=task, status=status)


def phase_context(root: Path, task_dir: Path, phase: str | None) -> dict[str, str]:
    """Header lines for a phase step: its start commit and the diff command review should read."""
    if not phase:
        return {}
    sha = (read_config(task_dir).get("phase_start_commits") or {}).get(phase)
    if not sha:
        return {}
    header = {"Phase start commit": sha, "Phase diff": f"git diff {sha} (plus untracked files)"}
    from specd.git.shown import masked  # here: only a phase step with a start commit asks

    if hidden := masked(root, sha):  # the tree's .gitattributes says binary (-diff): text all the same
        header["Phase diff, shown as binary by .gitattributes but text"] = f"git diff --text {sha} -- " + " ".join(
            shlex.quote(path) for path in hidden)
    return header
