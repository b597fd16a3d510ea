"""Workflow ids: the repository's identity (its root commit, the same in every clone) plus the task name.

Two submits of a task from any two clones name the same workflow, so Temporal itself refuses to run it twice
and any clone can find, answer or cancel it.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import UsageError
from specd.git.repo import git


def repo_key(root: Path) -> str:
    done = git(root, "rev-list", "--max-parents=0", "HEAD")
    roots = sorted(done.stdout.split())
    if done.returncode != 0 or not roots:
        raise UsageError(f"{root} is not a git repository with a commit: Temporal tasks are named after the "
                         "repository's first commit", fix="commit once (`git add -A && git commit -m initial`)")
    return roots[0][:12]


def workflow_id(key: str, task: str) -> str:
    return f"specd-{key}-{task}"


def branch(task: str) -> str:
    return f"specd/{task}"
