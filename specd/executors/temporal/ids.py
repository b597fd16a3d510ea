"""Workflow ids: the repository's identity (its root commit, the same in every clone) plus the task name.

Two submits of a task from any two clones name the same workflow, so Temporal itself refuses to run it twice
and any clone can find, answer or cancel it.
"""

from __future__ import annotations

import re
from pathlib import Path

from specd.errors import UsageError
from specd.git.repo import git

# What repo_key makes, and all a worker accepts as one: a job's key names a folder under the worker's workdir.
KEY = re.compile(r"[0-9a-f]{12}")
KEY_RULE = "12 lowercase hex digits (the start of the repository's root commit, as `specd run` makes it)"


def repo_key(root: Path) -> str:
    done = git(root, "rev-list", "--max-parents=0", "HEAD")
    roots = sorted(done.stdout.split())
    if done.returncode != 0 or not roots:
        raise UsageError(f"{root} is not a git repository with a commit: Temporal tasks are named after the "
                         "repository's first commit", fix="commit once (`git add -A && git commit -m initial`)")
    return roots[0][:12]


def is_key(value: object) -> bool:
    return isinstance(value, str) and KEY.fullmatch(value) is not None


def workflow_id(key: str, task: str) -> str:
    return f"specd-{key}-{task}"


def branch(task: str) -> str:
    return f"specd/{task}"
