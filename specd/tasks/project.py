"""The project: the folder holding ``.specd/`` and the paths inside it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.errors import ConfigError

SPECD_DIR = ".specd"
DIGITS = frozenset("0123456789")


def in_order(name: str) -> tuple[tuple[str | int, ...], str]:
    """A task's place in a listing: its runs of digits compare as numbers, so t2 comes before t10 (and t01
    beside t1, then by name)."""
    parts: list[str | int] = []
    run = ""
    for char in name:  # ASCII digits only: a folder's name is not checked, and int("²") fails
        if run and (char in DIGITS) != (run[-1] in DIGITS):
            parts.append(int(run) if run[-1] in DIGITS else run)
            run = ""
        run += char
    if run:
        parts.append(int(run) if run[-1] in DIGITS else run)
    if parts and isinstance(parts[0], int):
        parts.insert(0, "")  # text, number, text, ...: the same kind at the same place in every key
    return tuple(parts), name


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def specd_dir(self) -> Path:
        return self.root / SPECD_DIR

    @property
    def hooks_dir(self) -> Path:
        return self.specd_dir / "hooks"

    @property
    def workflows_dir(self) -> Path:
        return self.specd_dir / "workflows"

    @property
    def tasks_dir(self) -> Path:
        return self.specd_dir / "tasks"

    @property
    def features_dir(self) -> Path:
        """Where specdacular's older releases kept tasks; still read, never written."""
        return self.specd_dir / "features"

    @property
    def config_file(self) -> Path:
        return self.specd_dir / "config.json"

    def rel(self, path: Path) -> str:
        """A path as the user would type it: relative to the root when inside it."""
        try:
            return str(path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)


def find_project(start: Path | None = None, explicit: Path | None = None) -> Project:
    """``--project`` wins; else walk up to the folder holding ``.specd/``, never past the top of the git repository
    the walk starts in (a ``.specd/`` above it is another project's: a repository cloned inside one); else cwd."""
    if explicit is not None:
        return Project(explicit.expanduser().resolve())
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / SPECD_DIR).is_dir():
            return Project(folder)
        if (folder / ".git").exists():
            break  # the repository's top: what holds it is not this project
    return Project(here)


def read_settings(project: Project) -> dict[str, Any]:
    """The project's ``.specd/config.json`` (specdacular writes it): absent means defaults.

    Only the keys specd acts on are checked; anything else in it belongs to other tools.
    """
    path = project.config_file
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})",
                          fix="fix the JSON syntax in that file, or delete it to use the defaults") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, got {type(data).__name__}",
                          fix='write it as an object, e.g. {"auto_commit_docs": true}')
    return data


def is_orchestrator(settings: dict[str, Any]) -> bool:
    return str(settings.get("type", "")).strip().lower() == "orchestrator"


ORCHESTRATOR_NOTE = ("this is a specdacular orchestrator project (\"type\": \"orchestrator\" in .specd/config.json); "
                     "specd does not run orchestrator projects: run each sub-project's tasks from that project's "
                     "own folder")
