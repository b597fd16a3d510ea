"""The tasks' documents as MCP resources: ``specd://tasks/<task>/<path>`` for every markdown file in a task's
folder (FEATURE.md, CONTEXT.md, DECISIONS.md, ROADMAP.md, the phases' plans).

Only what the listing shows can be read: a path is looked up among the task's documents, never opened as given,
so no ``..`` or symlink leads out of the task's folder. The text is redacted, as on the page.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import UsageError
from specd.redact import redact
from specd.system.ownfiles import walk
from specd.tasks.locate import locate
from specd.tasks.project import Project
from specd.tasks.secrets import load_project_secrets
from specd.tasks.task import SLUG, existing_task, list_tasks

PREFIX = "specd://tasks/"
TEMPLATE = PREFIX + "{task}/{path}"


def uri(task: str, path: str) -> str:
    return f"{PREFIX}{task}/{path}"


def documents(project: Project, task: str) -> dict[str, Path]:
    """The task's markdown files by their path inside its folder (hidden ones, such as the rendered state, left
    out), each really inside the folder."""
    folder = existing_task(locate(project, task), task)
    inside = folder.resolve()
    found: dict[str, Path] = {}
    for path in sorted(Path(here) / name for here, _, names in walk(folder) for name in names if name.endswith(".md")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        try:
            if path.resolve().is_relative_to(inside):
                found[relative.as_posix()] = path
        except (OSError, RuntimeError):  # a symlink loop
            continue
    return found


def listing(project: Project) -> list[tuple[str, str]]:
    """(task, path) of every document of every task; a task whose folder cannot be read is left out."""
    from specd.errors import SpecdError

    found = []
    for task in sorted(list_tasks(project)):
        try:
            found += [(task, path) for path in documents(project, task)]
        except SpecdError:
            continue
    return found


def read(project: Project, address: str) -> str:
    """The text of the document at ``address``; an address that names none is bad input, with the fix."""
    task, _, path = address.removeprefix(PREFIX).partition("/")
    if not address.startswith(PREFIX) or not SLUG.match(task) or not path:
        raise UsageError(f"{address!r} is not a task document's address",
                         fix=f"use one the resource list shows: {TEMPLATE}")
    known = documents(project, task)
    if path not in known:
        raise UsageError(f"task {task!r} has no document {path!r}",
                         fix=f"use one of: {', '.join(known) or '(none yet)'}")
    load_project_secrets(project.root)
    return redact(known[path].read_text(encoding="utf-8", errors="replace"))
