"""An agent per step (issue 30): a step's ``agent:`` block over the pipeline's, checked at load.

A step's block is the pipeline's block with the step's keys written over it, for that step only, so a
review step can say ``{"backend": "anthropic", "model": "..."}`` while the pipeline runs Claude Code.
The JSON Schema already holds it to the keys of the pipeline's block (the same ``$defs/agent``); what it
cannot say is checked here, at the line it is written on:

- a run's budgets (``max_cost_usd``, ``max_tokens``) cover every step together, so a step cannot set
  them (its own are ``max_step_cost_usd`` and ``max_step_tokens``);
- a block on a pipeline reference would never be read (the cursor enters the referenced pipeline);
- the command and scripted backends need their command or script, from the step or the pipeline.

Which backend a step runs on, given `--agent`: a backend the step names wins for that step, since the
file says that step needs it; otherwise `--agent` (else the pipeline's block) decides, as for every step.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.pipeline.limits import json_path
from specd.pipeline.model import PipelineConfig, Step

RUN_BUDGETS = ("max_cost_usd", "max_tokens")
NEEDS = {"command": "command", "scripted": "script"}  # a backend and the key it cannot run without
DEFAULT_BACKEND = "anthropic"


def check_step_agents(path: Path, data: Mapping[str, Any]) -> None:
    """Raise ConfigError naming every step ``agent:`` block that cannot work, at its file:line."""
    from specd.pipeline.groups import every_step

    base: Mapping[str, Any] = data["agent"] if isinstance(data.get("agent"), dict) else {}
    problems: list[str] = []
    for parts, step in every_step(data["pipelines"]):  # a group's members too
        block = step.get("agent")
        if not isinstance(block, dict):
            continue  # absent; a wrong type was the schema's to report
        where = [*parts, "agent"]
        if "pipeline" in step:
            problems.append(_at(path, where, "'agent' only works on a step with 'workflow'; put it on the "
                                f"steps inside pipeline {step['pipeline']!r}"))
            continue
        for key in RUN_BUDGETS:
            if key in block:
                problems.append(_at(path, [*where, key], f"{key} is the whole run's budget and belongs in "
                                    f"the pipeline's agent block; a step's own is max_step_{key[4:]}"))
        merged = {**base, **block}
        backend = str(merged.get("backend", DEFAULT_BACKEND))
        needed = NEEDS.get(backend)
        if needed and not merged.get(needed):
            problems.append(_at(path, [*where, "backend"] if "backend" in block else where,
                                f"the {backend} backend needs agent.{needed}; add \"{needed}\": ... to this "
                                "block (or to the pipeline's agent block)"))
    if problems:
        raise ConfigError("\n".join(problems), fix="correct the step agent blocks named above; a step's agent "
                          'block takes the keys of the pipeline\'s, e.g. {"backend": "anthropic", "model": "..."}')


def settings_for(config: PipelineConfig, step: Step) -> Mapping[str, Any]:
    """The agent settings ``step`` runs with: the pipeline's block, the step's keys written over it."""
    if not step.agent:
        return config.agent
    return {**config.agent, **step.agent}


def own_backend(step: Step) -> str | None:
    """The backend the step itself names (it wins over `--agent`), or None."""
    return str(step.agent["backend"]) if step.agent and step.agent.get("backend") else None


def backend_label(config: PipelineConfig, step: Step) -> str:
    """What `pipeline show` says a step runs on: its own backend, else the run's (`--agent`, else the file's)."""
    own = own_backend(step)
    if own:
        return f"{own} (the step's own)"
    return f"{config.agent.get('backend', DEFAULT_BACKEND)} (the pipeline's, unless --agent names another)"


def step_backends(config: PipelineConfig) -> dict[str, list[str]]:
    """Each backend steps name for themselves, with the steps (for `specd doctor`)."""
    found: dict[str, list[str]] = {}
    for steps in config.pipelines.values():
        for step in steps:
            own = own_backend(step)
            if own and step.enabled:
                found.setdefault(own, []).append(step.name)
    return found


def _at(path: Path, parts: list[Any], why: str) -> str:
    from specd.pipeline.keys import line_of

    line = line_of(path, parts)
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}: {why}"
