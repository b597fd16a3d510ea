"""Task folders: ``.specd/tasks/<task>/`` with its documents and specdacular's config.json."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from string import Template
from typing import Any

from specd.errors import TaskError, did_you_mean
from specd.resources import builtin_dir
from specd.state import atomic
from specd.tasks.project import Project, in_order

# \Z, not $: "$" also matches before a final newline, so "name\n" passed as a name (a path, a branch, a log line)
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}\Z")
DOCUMENTS = ("FEATURE.md", "CONTEXT.md", "DECISIONS.md", "CHANGELOG.md", "STATE.md")
# The stage a built-in step moves the task to, when neither the step nor its workflow says.
DEFAULT_STAGES = {"discuss": "discussion", "research": "research", "plan": "planning",
                  "execute": "execution", "review": "review", "revise": "review"}


def check_name(name: str) -> None:
    if not SLUG.match(name) or ".." in name:
        suggestion = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.") or "my-task"
        raise TaskError(
            f"{name!r} is not a valid task name: use lowercase letters, digits, '-', '_' or '.' "
            "(no '/', '..' or spaces; at most 64 characters)",
            fix=f"try `{suggestion}`",
        )


def task_dir(project: Project, name: str) -> Path:
    check_name(name)
    return project.tasks_dir / name


def existing_task(project: Project, name: str) -> Path:
    """The task's folder: ``.specd/tasks/<name>`` or specdacular's legacy ``.specd/features/<name>``."""
    check_name(name)
    found = [folder / name for folder in (project.tasks_dir, project.features_dir) if _is_task(folder / name)]
    if len(found) > 1:
        raise TaskError(f"task {name!r} exists twice: {found[0]} and {found[1]}; specd cannot tell which to use",
                        fix=f"merge them into one folder, or rename one (e.g. move {found[1]} to another name)")
    if not found:
        known = list_tasks(project)
        raise TaskError(
            f"no task {name!r} in {project.tasks_dir} (or {project.features_dir})" + did_you_mean(name, known),
            fix=f"create it with `specd new {name}`" + (f", or use one of: {', '.join(known)}" if known else ""),
        )
    return found[0]


def _is_task(folder: Path) -> bool:
    return (folder / "config.json").is_file()


def list_tasks(project: Project) -> list[str]:
    """Every task in ``tasks/`` and legacy ``features/``; a name in both is listed once (and errors on use)."""
    names: set[str] = set()
    for root in (project.tasks_dir, project.features_dir):
        if root.is_dir():
            names.update(p.name for p in root.iterdir() if _is_task(p))
    return sorted(names, key=in_order)


def create_task(project: Project, name: str, description: str, depends_on: Sequence[str] = ()) -> Path:
    folder = task_dir(project, name)
    legacy = project.features_dir / name
    if legacy.exists():
        raise TaskError(f"task {name!r} already exists at {legacy} (specdacular's features folder)",
                        fix=f"pick another name, or continue it with `specd continue {name}`")
    if folder.exists():
        raise TaskError(f"task {name!r} already exists at {folder}",
                        fix=f"pick another name, or continue it with `specd continue {name}`")
    folder.mkdir(parents=True)
    values = {"task": name, "description": description or "(describe the feature here)",
              "created": date.today().isoformat()}
    for doc in DOCUMENTS:
        template = builtin_dir("templates") / doc
        text = Template(template.read_text(encoding="utf-8")).safe_substitute(values)
        atomic.write_text(folder / doc, text)
    atomic.write_json(folder / "config.json", {
        "task_name": name,
        "created": values["created"],
        "description": description,
        "stage": "discussion",
        "phases": {"total": 0, "completed": 0, "current": None, "current_status": None},
        **({"depends_on": list(depends_on)} if depends_on else {}),
    })
    return folder


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"{path}: missing", fix="recreate the task with `specd new`") from None
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise TaskError(f"{path}: invalid JSON ({exc})", fix="fix the JSON syntax in that file") from None
    except OSError as exc:
        raise TaskError(f"{path}: cannot read it ({exc.strerror or exc})", fix="check the file's permissions") from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a JSON object, got {type(data).__name__}",
                        fix="restore the file from git")
    return data


def update_config(folder: Path, *, stage: str | None = None, **phases: Any) -> None:
    """Keep specdacular's fields current so other tools can read where the task is."""
    data = read_config(folder)
    before = json.dumps(data, sort_keys=True)
    if stage:
        data["stage"] = stage
    if not isinstance(data.get("phases"), dict):  # specdacular may leave it null, "" or []
        data["phases"] = {}
    data["phases"].update(phases)
    if json.dumps(data, sort_keys=True) != before:  # a step that moves nothing costs no durable write
        atomic.write_json(folder / "config.json", data)
