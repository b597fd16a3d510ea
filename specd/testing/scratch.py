"""A scratch copy of a project for `specd test`: its pipeline and workflows, none of its tasks.

A case runs in a temporary folder, so a test never touches the user's tree, tasks or git history. The
copy holds what decides a run's path: the pipeline file, the project's workflows and hooks, and its
``.specd/config.json``. The pipeline file is written back as JSON with every backend choice taken out
(the pipeline's ``agent.backend`` and a step's own), so every step, whatever backend the file names,
runs on the scripted agent the case plays; run-wide budgets and the rest of each block stay as written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from specd.pipeline.load import find_pipeline_file
from specd.pipeline.parse import read_data
from specd.tasks.project import Project

COPIED = ("workflows", "hooks", "config.json")
# Which agent runs, and the per-step caps only a real agent could keep (the scripted one spends nothing).
BACKEND_KEYS = ("backend", "command", "script", "max_step_cost_usd", "max_step_tokens")


def scratch_project(project: Project, root: Path) -> Project:
    """Copy what a run's path depends on from ``project`` into ``root``; return the copy."""
    copy = Project(root)
    copy.specd_dir.mkdir(parents=True)
    for name in COPIED:
        source = project.specd_dir / name
        if source.is_dir():
            shutil.copytree(source, copy.specd_dir / name, symlinks=True)
        elif source.is_file():
            shutil.copy2(source, copy.specd_dir / name)
    path, is_builtin = find_pipeline_file(project)
    if not is_builtin:
        data = without_backends(read_data(path))
        (copy.specd_dir / "pipeline.json").write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
        _copy_named_workflows(project, copy, data)
    return copy


def without_backends(data: dict[str, Any]) -> dict[str, Any]:
    """The pipeline with no backend named anywhere: the scripted agent plays every step."""
    out = dict(data)
    if isinstance(out.get("agent"), dict):
        out["agent"] = {k: v for k, v in out["agent"].items() if k not in BACKEND_KEYS}
    out["pipelines"] = {name: [_plain_step(step) for step in steps] for name, steps in data["pipelines"].items()}
    return out


def _plain_step(step: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(step.get("agent"), dict):
        return step
    block = {k: v for k, v in step["agent"].items() if k not in BACKEND_KEYS}
    return {**{k: v for k, v in step.items() if k != "agent"}, **({"agent": block} if block else {})}


def _copy_named_workflows(project: Project, copy: Project, data: dict[str, Any]) -> None:
    """Workflows named by a path (``docs/flows/plan.md``) live outside .specd/: copied to the same place."""
    named = [step.get("workflow") for steps in data["pipelines"].values() for step in steps]
    for name in named:
        if isinstance(name, str) and "/" in name:
            source = project.root / name
            if source.is_file():
                target = copy.root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
