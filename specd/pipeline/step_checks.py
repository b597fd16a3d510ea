"""A step's `checks:` and `attempts:` as the pipeline file writes them: records, and what the schema cannot say.

A check is a command run in the project tier after the agent finishes (the same jail as a `run:` hook), so
each one becomes a ``HookSpec`` with ``run`` set: its timeout, network, sandbox and env_allow mean what they
mean for a hook. The engine's side (running them, the attempts, the held wait) is in specd/engine/checks.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specd.pipeline.keys import line_near
from specd.pipeline.limits import json_path
from specd.pipeline.model import HookSpec

DEFAULT_ATTEMPTS = 3
OUTCOME = "checks_failed"  # the step's outcome once its last attempt's checks failed
# What a bad `checks`/`attempts` value should have been, added to the schema's message for it.
HINTS = {
    "checks": 'write checks as a list of commands, e.g. "checks": ["python -m pytest -q"], or of objects '
              '{"run": "...", "timeout": 600, "network": false}',
    "attempts": 'write attempts as a whole number ≥ 1, e.g. "attempts": 3',
    "parallel": 'a group is {"name": "reviews", "parallel": [read-only steps], "combine": "any-revise"}; each '
                'member is a step such as {"name": "security", "workflow": "review.md", "read_only": true}',
    "combine": 'write combine as "any-revise", "all-approve", or a map such as {"revise": "any", "approve": "all"}',
    "read_only": 'write read_only as true or false',
}


def check_specs(raw: Any) -> tuple[HookSpec, ...]:
    """The validated list as records; a bare string is the command itself (``HookSpec.create`` would read a
    string as a workflow path)."""
    return tuple(HookSpec(run=item) if isinstance(item, str) else HookSpec.create(item) for item in raw or ())


def attempts_of(attempts: int | None) -> int:
    return attempts or DEFAULT_ATTEMPTS


def hint(parts: Sequence[Any]) -> str:
    """The hint for a schema error at ``parts`` (a JSON path) inside a step's checks or attempts, else ''."""
    key = parts[3] if len(parts) > 3 and parts[0] == "pipelines" else None
    return f" ({HINTS[key]})" if isinstance(key, str) and key in HINTS else ""


def step_problems(path: Path, pipeline: str, index: int, step: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Problems and warnings of one step's checks that the JSON Schema cannot express."""
    base = ["pipelines", pipeline, index]
    problems: list[str] = []
    for i, item in enumerate(step.get("checks") or ()):
        command = item if isinstance(item, str) else item.get("run") if isinstance(item, dict) else None
        if isinstance(command, str) and not command.strip():
            parts = [*base, "checks", i] + ([] if isinstance(item, str) else ["run"])
            problems.append(f"{_at(path, parts)}: {json_path(parts)}: the command is blank; "
                            f"{HINTS['checks']}")
    if "checks" in step and "pipeline" in step:
        parts = [*base, "checks"]
        problems.append(f"{_at(path, parts)}: {json_path(parts)}: checks only run after a workflow step; "
                        "put them on the steps inside the referenced pipeline")
    warnings: list[str] = []
    if "attempts" in step and "checks" not in step and "output" not in step:  # typed outputs count attempts too
        parts = [*base, "attempts"]
        warnings.append(f"{_at(path, parts)}: {json_path(parts)}: has no effect without checks; add "
                        '"checks" or remove it')
    return problems, warnings


def _at(path: Path, parts: list[Any]) -> str:
    line = line_near(path, parts)
    return f"{path}:{line}" if line else str(path)
