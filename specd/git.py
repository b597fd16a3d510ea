"""Git integration: a commit per step, as specdacular does, and each phase's start commit.

- ``docs(<task>): starting <step>`` before a step, ``docs(<task>): <step> complete`` after;
- ``auto_commit_docs`` covers the task folder, ``auto_commit_code`` everything else
  (both default true, in ``.specd/config.json``);
- specd's transient files are kept out by ``.specd/.gitignore``.
A machine with no git identity still gets commits, as "specd <specd@localhost>", with a warning.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from specd.events import Event, EventBus
from specd.project import Project
from specd.redact import redact
from specd.setup import GITIGNORE
from specd.state import atomic
from specd.task import read_config

FALLBACK_IDENTITY = ["-c", "user.name=specd", "-c", "user.email=specd@localhost"]


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def is_repo(root: Path) -> bool:
    try:
        return git(root, "rev-parse", "--is-inside-work-tree").stdout.strip() == "true"
    except OSError:  # git is not installed
        return False


def head(root: Path) -> str | None:
    result = git(root, "rev-parse", "HEAD")
    return result.stdout.strip() if result.returncode == 0 else None


def settings(project: Project) -> dict[str, bool]:
    try:
        data: Any = json.loads(project.config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    return {key: bool(data.get(key, True)) for key in ("auto_commit_docs", "auto_commit_code")}


class GitRecorder:
    """Listens to the loop's events and commits; never fails a run because git did."""

    def __init__(self, project: Project, task: str, task_dir: Path, events: EventBus) -> None:
        self.root, self.task, self.task_dir, self.events = project.root, task, task_dir, events
        self.options = settings(project)
        self.identity: list[str] = [] if git(self.root, "config", "user.email").stdout.strip() else FALLBACK_IDENTITY
        self.warned = False
        ignore = project.specd_dir / ".gitignore"
        if not ignore.exists() and project.specd_dir.is_dir():
            ignore.write_text(GITIGNORE, encoding="utf-8")

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.kind == "step_started" and data.get("attempt", 1) == 1:
            if data["step"] == "execute" and data.get("phase"):
                self._phase_start(data["phase"])
            self.commit(f"docs({self.task}): starting {data['step']}", code=False)
        elif event.kind == "step_finished":
            phase = f" (phase {data['phase']})" if data.get("phase") else ""
            self.commit(f"docs({self.task}): {data['step']} complete{phase}", code=True)
        elif event.kind == "run_finished":
            self.commit(f"docs({self.task}): run state {data['status']}", code=False)

    def _phase_start(self, phase: str) -> None:
        starts = read_config(self.task_dir).get("phase_start_commits") or {}
        if phase not in starts and (sha := head(self.root)):
            data = read_config(self.task_dir)
            data.setdefault("phase_start_commits", {})[phase] = sha
            atomic.write_json(self.task_dir / "config.json", data)

    def commit(self, message: str, *, code: bool) -> None:
        paths = []
        if self.options["auto_commit_docs"]:
            paths.append(str(self.task_dir.relative_to(self.root)))
        if code and self.options["auto_commit_code"]:
            paths.append(".")
        if not paths:
            return
        git(self.root, "add", "-A", "--", *paths)
        if git(self.root, "diff", "--cached", "--quiet").returncode == 0:
            return  # nothing changed, so no empty commit
        result = git(self.root, *self.identity, "commit", "-q", "-m", redact(message))
        if self.identity and not self.warned:
            self.warned = True
            self.events.emit("warning", message="no git identity configured; committed as specd <specd@localhost> "
                                                "(set one with `git config user.email you@example.com`)")
        if result.returncode != 0:
            self.events.emit("warning", message=f"git commit failed: {(result.stderr or result.stdout).strip()}")


def phase_context(root: Path, task_dir: Path, phase: str | None) -> dict[str, str]:
    """Header lines for a phase step: its start commit and the diff command review should read."""
    if not phase:
        return {}
    sha = (read_config(task_dir).get("phase_start_commits") or {}).get(phase)
    if not sha:
        return {}
    return {"Phase start commit": sha, "Phase diff": f"git diff {sha} (plus untracked files)"}
