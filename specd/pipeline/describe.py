"""Plain-data views of a resolved pipeline, for `pipeline show` and `hooks`."""

from __future__ import annotations

from typing import Any, Literal

from specd.errors import ConfigError, did_you_mean
from specd.pipeline.model import PipelineConfig, Step
from specd.pipeline.resolve import ResolvedHook, global_hook, resolve_workflow, step_hook
from specd.pipeline.step_agents import backend_label
from specd.pipeline.step_checks import attempts_of
from specd.tasks.project import Project


def hook_view(hook: ResolvedHook | None) -> dict[str, Any] | None:
    if hook is None:
        return None
    return {"source": hook.source, "path": str(hook.path) if hook.path else None, **hook.spec.as_dict()}


def step_view(config: PipelineConfig, pipeline: str, step: Step, project: Project) -> dict[str, Any]:
    view: dict[str, Any] = {
        "name": step.name,
        "enabled": step.enabled,
        "pause_in_semi_auto": step.pause_in_semi_auto,
        "foreach": step.foreach,
        "pipeline": step.pipeline,
        "workflow": step.workflow,
        "workflow_path": None,
        "workflow_origin": None,
        "outcomes": dict(step.outcomes),
        "max_visits": step.max_visits,
        "stage": step.stage,
        "model": step.model,
        "max_turns": step.max_turns,
        "output": dict(step.output) if step.output is not None else None,  # typed output and condition (issue 30)
        "when": step.when,
        "checks": [check.as_dict() for check in step.checks],  # see step_checks.py
        "attempts": attempts_of(step.attempts) if step.checks else None,
        # An agent per step (issue 30): the step's own block, and the backend it runs on.
        "agent": dict(step.agent) if step.agent else None,
        "backend": backend_label(config, step) if step.workflow else None,
    }
    if step.read_only:  # issue 30: its jail binds the tree read-only (always, in a parallel group)
        view["read_only"] = True
    if step.group:  # the members run side by side; `combine` as written, and as the rules it means
        view["parallel"] = [step_view(config, pipeline, member, project) for member in step.members]
        view["combine"] = step.combine_rule if isinstance(step.combine_rule, str) else dict(step.combine_rule or {})
        view["combine_rules"] = [list(rule) for rule in step.combine]
    if step.workflow:
        found = resolve_workflow(step.workflow, project, where=f"{config.source}: {step.where}.workflow")
        view["workflow_path"], view["workflow_origin"] = str(found.path), found.origin
    if step.workflow or step.group:  # a pipeline reference's hooks would run around a whole sub-pipeline: not supported
        view["hooks"] = {p: hook_view(step_hook(config, pipeline, step, p, project)) for p in ("pre", "post")}
    return view


def pipeline_view(config: PipelineConfig, project: Project) -> dict[str, Any]:
    return {
        "source": str(config.source),
        "origin": "builtin" if config.builtin else "project",
        "schema_version": config.schema_version,
        "digest": config.digest,
        "mode": config.mode or "interactive",
        "hooks": {p: hook_view(global_hook(config, p, project)) for p in ("pre-step", "post-step")},
        "agent": dict(config.agent),
        "pipelines": {
            name: [step_view(config, name, step, project) for step in steps]
            for name, steps in config.pipelines.items()
        },
        "warnings": list(config.warnings),
    }


def hook_rows(config: PipelineConfig, project: Project, step_name: str | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    points: tuple[Literal["pre-step", "post-step"], ...] = ("pre-step", "post-step")
    for gpoint in points:
        hook = global_hook(config, gpoint, project)
        if hook:
            rows.append({"pipeline": "*", "step": "*", "point": gpoint, "status": "enabled", **_row(hook)})
    found = False
    for pipeline, steps in config.pipelines.items():
        for step in steps:
            if step_name and step.name != step_name:
                continue
            found = True
            if step.pipeline:
                continue
            for point in ("pre", "post"):
                hook = step_hook(config, pipeline, step, point, project)
                status = "enabled" if step.enabled else "disabled"
                rows.append({"pipeline": pipeline, "step": step.name, "point": point, "status": status,
                             **_row(hook)})
    if step_name and not found:
        names = sorted({s.name for steps in config.pipelines.values() for s in steps})
        raise ConfigError(f"no step named {step_name!r} in {config.source}" + did_you_mean(step_name, names),
                          fix=f"use one of: {', '.join(names)}")
    return rows


def _row(hook: ResolvedHook | None) -> dict[str, Any]:
    if hook is None:
        return {"hook": None, "source": None, "path": None, "run": None, "mode": None, "optional": None}
    return {"hook": hook.name, "source": hook.source, "path": str(hook.path) if hook.path else None,
            "run": hook.spec.run, "mode": hook.spec.mode, "optional": hook.spec.optional}
