"""The prompt an agent receives: a short header, then the workflow body."""

from __future__ import annotations

from pathlib import Path

from specd.phases import phase_dir
from specd.workflow import Workflow


def render_prompt(*, task: str, task_dir: Path, project_root: Path, step: str, pipeline: str, phase: str | None,
                  kind: str, workflow: Workflow, outcomes: tuple[str, ...], mode: str,
                  extra: dict[str, str] | None = None) -> str:
    where = f"phase {phase}" if phase else "no phase"
    try:
        folder = task_dir.relative_to(project_root)
    except ValueError:
        folder = task_dir
    lines = [
        f"# specd {kind}: {step} (pipeline {pipeline}, {where})",
        "",
        f"- Task: {task}",
        f"- Task folder: {folder}/ (project root: {project_root})",
        f"- Allowed outcomes: {', '.join(outcomes)}",
    ]
    if phase:  # older specdacular tasks keep their phase plans under plans/, not phases/
        lines.append(f"- Phase folder: {folder}/{phase_dir(task_dir, phase).relative_to(task_dir)}/")
    for key, value in (extra or {}).items():
        lines.append(f"- {key}: {value}")
    if mode == "auto":
        lines.append("- Mode: auto. No human is present: decide, and record each assumption in DECISIONS.md.")
    else:
        lines.append(f"- Mode: {mode}. A human may answer questions.")
    lines += [
        "- specd owns the run state: never edit .pipeline-state.*, events.jsonl or config.json's stage fields.",
        "- Finish by reporting exactly one allowed outcome with a one-line summary.",
        "",
        "---",
        "",
        workflow.body,
    ]
    return "\n".join(lines)
