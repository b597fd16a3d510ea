"""What the user chose about commits (``.specd/config.json``), and the files that keep git tidy.

- ``auto_commit_docs`` (default true): commit the task folder;
- ``auto_commit_code`` (default true): commit what each step changed outside it;
- ``commit_transcripts`` (default false): also commit the task's ``transcripts/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.git.repo import Repo
from specd.git.tree import is_secret
from specd.state import atomic
from specd.system.agent_state import FOLDER as STATE_FOLDER
from specd.system.ownfiles import walk
from specd.tasks.project import Project
from specd.tasks.setup import GITIGNORE
from specd.tasks.task import read_config


@dataclass(frozen=True)
class Settings:
    root: Path
    specd_dir: Path
    commit_docs: bool = True
    commit_code: bool = True
    commit_transcripts: bool = False

    @classmethod
    def load(cls, project: Project) -> Settings:
        try:
            data: Any = json.loads(project.config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = {}
        data = data if isinstance(data, dict) else {}
        return cls(project.root, project.specd_dir, bool(data.get("auto_commit_docs", True)),
                   bool(data.get("auto_commit_code", True)), bool(data.get("commit_transcripts", False)))

    @staticmethod
    def phase_start(repo: Repo, task_dir: Path, phase: str | None, step: str) -> None:
        """Record the commit a phase's execution starts from, so its review can read the phase's diff."""
        if step != "execute" or not phase:
            return
        data = read_config(task_dir)
        if phase not in (data.get("phase_start_commits") or {}) and (sha := repo.head()):
            data.setdefault("phase_start_commits", {})[phase] = sha
            atomic.write_json(task_dir / "config.json", data)


    @staticmethod
    def transcripts(repo: Repo, task_dir: Path) -> list[str]:
        """The task's transcript files, for ``commit_transcripts`` (they are ignored, so added by force); never an
        agent CLI's own state beside them (``agent_state.FOLDER``: its sign-in, and its sessions as it wrote them,
        which specd's redaction never saw)."""
        folder = task_dir / "transcripts"
        files = []
        for here, dirs, names in walk(folder):
            if here == str(folder):
                dirs[:] = [name for name in dirs if name != STATE_FOLDER]
            files += [path for name in names if (path := Path(here) / name).is_file()]
        files.sort()
        return [rel for rel in map(repo.rel, files) if not is_secret(rel)]


def ensure_gitignore(project: Project) -> None:
    """Write ``.specd/.gitignore``, or append the lines an older specd did not know yet."""
    path = project.specd_dir / ".gitignore"
    if not project.specd_dir.is_dir():
        return
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")  # git's rules are bytes: keep them so
    except FileNotFoundError:
        text = ""
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in GITIGNORE.splitlines() if line not in have]
    if missing:
        separator = "\n" if text and not text.endswith("\n") else ""
        with path.open("a", encoding="utf-8") as handle:
            handle.write(separator + "\n".join(missing) + "\n")
