"""Which tasks this clone submitted to Temporal, and where: a record in the repository's git folder (machine-local,
never committed), written by `specd run --executor temporal` (``executors/temporal/record.py``). It holds the
address, namespace, task queue and remote only: never TLS or a key.

Read here, below the executors, because where a task lives (``home.py``) needs it too: a task this clone submitted,
with no record of its home and no run on this machine, is its workflow's, not a task that never ran.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from specd.tasks.project import Project

NAME = "specd-temporal.json"


def path(project: Project) -> Path | None:
    """The record in the repository's common git folder, found without starting git (or importing specd.git):
    `status` and the answers look here on every call. Git finds its repository the same way, walking up from
    the project to the nearest ``.git``; only when a GIT_* variable changes that search is git asked."""
    if any(name in os.environ for name in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES")):
        from specd.git.repo import git

        done = git(project.root, "rev-parse", "--path-format=absolute", "--git-common-dir")
        return Path(done.stdout.strip()) / NAME if done.returncode == 0 and done.stdout.strip() else None
    for dot in chain(project):
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
    where_ = path(project)
    return [*chain(project), *([where_] if where_ else [])]


def chain(project: Project) -> list[Path]:
    found = []
    for folder in (project.root, *project.root.parents):
        found.append(folder / ".git")
        if os.path.lexists(found[-1]):
            break
    return found


def load(project: Project) -> dict[str, dict[str, Any]]:
    where_ = path(project)
    try:
        data = json.loads(where_.read_text(encoding="utf-8")) if where_ else {}
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def where(project: Project, task: str) -> dict[str, Any]:
    found = load(project).get(task)
    return found if isinstance(found, dict) else {}
