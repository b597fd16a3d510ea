"""The project: the folder holding ``.specd/`` and the paths inside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SPECD_DIR = ".specd"


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
    def config_file(self) -> Path:
        return self.specd_dir / "config.json"

    def rel(self, path: Path) -> str:
        """A path as the user would type it: relative to the root when inside it."""
        try:
            return str(path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)


def find_project(start: Path | None = None, explicit: Path | None = None) -> Project:
    """``--project`` wins; else walk up to the folder holding ``.specd/``; else cwd."""
    if explicit is not None:
        return Project(explicit.expanduser().resolve())
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / SPECD_DIR).is_dir():
            return Project(folder)
    return Project(here)
