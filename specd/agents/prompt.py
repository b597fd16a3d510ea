"""The prompt an agent receives: a short header, then the workflow body.

Workflows describe the decision ("report `revise` when ..."), never a tool; the header is the one
place that tells the agent how its backend reports an outcome, so one workflow serves every backend.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specd.pipeline.workflow import Workflow
from specd.tasks.phases import phase_dir


def render_prompt(*, task: str, task_dir: Path, project_root: Path, step: str, pipeline: str, phase: str | None,
                  kind: str, workflow: Workflow, outcomes: tuple[str, ...], mode: str,
                  extra: dict[str, str] | None = None, backend: str = "",
                  output_schema: Mapping[str, Any] | None = None) -> str:
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
        *how_to_report(backend, outcomes),
        *(how_to_return(backend, output_schema) if output_schema is not None else []),
        *(_verdict_note(workflow) if kind == "step" else []),
        "",
        "---",
        "",
        workflow.body,
    ]
    return "\n".join(lines)


def how_to_report(backend: str, outcomes: tuple[str, ...]) -> list[str]:
    """Header lines telling the agent how to report its outcome, in its own backend's terms."""
    first = outcomes[0] if outcomes else "done"
    if backend in ("anthropic", "openai"):
        return ["- Finish by calling the `complete_step` tool with exactly one allowed outcome "
                f"({', '.join(outcomes)}) and a one-line summary."]
    if backend == "claude_code":
        return ["- Finish with your final structured output: `outcome` (exactly one of: "
                f"{', '.join(outcomes)}) and `summary` (one line)."]
    if backend == "codex":  # its --output-schema makes the final message that JSON object
        return ["- Finish with a final message that is only the JSON object the output schema asks for: "
                f"`outcome` (exactly one of: {', '.join(outcomes)}) and `summary` (one line)."]
    if backend == "gemini":
        return ["- Finish with a final message that is only a JSON object: `outcome` (exactly one of: "
                f"{', '.join(outcomes)}) and `summary` (one line)."]
    if backend in ("command", "scripted"):
        example = json.dumps({"outcome": first, "summary": "one line saying what was done"})
        return ["- Finish by writing a JSON object to the file named by the environment variable `$SPECD_RESULT`, "
                f"with `outcome` set to exactly one of: {', '.join(outcomes)}, and a one-line `summary`. Example:",
                f"  `{example}`"]
    return [f"- Finish by reporting exactly one allowed outcome ({', '.join(outcomes)}) with a one-line summary."]


def how_to_return(backend: str, schema: Mapping[str, Any]) -> list[str]:
    """Header lines asking for the step's typed output (issue 30), where its backend carries it."""
    where = {"anthropic": "as `output` in the `complete_step` call",
             "openai": "as `output` in the `complete_step` call",
             "claude_code": "as `output` in your final structured output",
             "codex": "as `output` in your final JSON message",
             "gemini": "as `output` in your final JSON object",
             "command": "as `output` in the JSON object written to `$SPECD_RESULT`",
             "scripted": "as `output` in the JSON object written to `$SPECD_RESULT`"}.get(backend, "as `output`")
    return [f"- This step returns an object {where}, matching this JSON Schema (it is checked, and a "
            f"mismatch is sent back): `{json.dumps(schema, sort_keys=True)}`"]


def _verdict_note(workflow: Workflow) -> list[str]:
    name = workflow.meta.get("verdict_file")
    if not name:
        return []
    return [f"- This step's verdict file is {name}: if no outcome is reported, its last `Verdict: <outcome>` "
            "line decides, and a step with neither fails."]
