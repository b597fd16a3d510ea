"""Creating a project's .specd/ folder (`specd init`)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from specd.pipeline.load import NAMES
from specd.resources import builtin
from specd.tasks.project import Project

# Transient files that must never be committed (locks, heartbeats, scratch results, the git recorder's
# step baseline and pending journal), and transcripts, which stay out of git unless `commit_transcripts` is set.
GITIGNORE = ("*.lock\n*.lock.owner\n**/.heartbeat\n**/.result-*.json\n**/.tmp-*\n**/.git-baseline.json\n"
             "tasks/*/transcripts/\n.cache/\nworktrees/\n**/.cancel-requested\n**/.git-pending.json\n"
             # Only grows (a line per event): re-added whole by every step's commit it made git's cost grow
             # with the run. The run state and its history, which are committed, are what resume needs.
             "tasks/*/events.jsonl\n"
             # Where each task lives in this clone (tasks/home.py): another clone's trees are not these.
             "homes/\n"
             # The project's control plane (executors/claim.py): its address carries the dashboard's token.
             "control.json\n")
CONFIG = {"auto_commit_docs": True, "auto_commit_code": True}


def init_project(project: Project, fmt: str | None = None) -> list[str]:
    """Create what is missing and report each action; never overwrite anything."""
    report: list[str] = []
    for folder in (project.specd_dir, project.hooks_dir, project.workflows_dir, project.tasks_dir):
        if not folder.is_dir():
            folder.mkdir(parents=True)
            report.append(f"created {project.rel(folder)}/")
    files = {project.specd_dir / ".gitignore": GITIGNORE,
             project.config_file: json.dumps(CONFIG, indent=2) + "\n"}
    if fmt:
        existing = [n for n in NAMES if (project.specd_dir / n).exists()]
        if existing:
            report.append(f"kept .specd/{existing[0]} (already there; specd never overwrites it)")
        else:
            files[project.specd_dir / f"pipeline.{fmt}"] = _default_pipeline(fmt)
    for path, text in files.items():
        if not path.exists():
            _write_new(path, text)
            report.append(f"created {project.rel(path)}")
    return report or [f"nothing to do: {project.specd_dir}/ is already set up"]


def _default_pipeline(fmt: str) -> str:
    data = json.loads(builtin("pipelines", "default.json").read_text(encoding="utf-8"))
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    header = "# specd pipeline: reorder, disable (enabled: false) or add steps; see `specd pipeline show`.\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _write_new(path: Path, text: str) -> None:
    # "x" mode: if something appeared meanwhile, fail rather than clobber it.
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
