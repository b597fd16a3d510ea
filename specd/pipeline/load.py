"""Find and load the effective pipeline: version gate → schema → semantics → records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.pipeline import cache, snapshot
from specd.pipeline.checks import check_semantics
from specd.pipeline.compat import specdacular_phase_loop
from specd.pipeline.groups import combine_rules, outcome_problems
from specd.pipeline.keys import line_of
from specd.pipeline.limits import json_path
from specd.pipeline.model import GLOBAL_POINTS, STEP_POINTS, HookSpec, PipelineConfig, Step, frozen_map, hook_specs
from specd.pipeline.parse import read_data
from specd.pipeline.resolve import resolve_workflow
from specd.pipeline.schema import check_schema, check_version
from specd.pipeline.step_agents import check_step_agents
from specd.pipeline.step_checks import check_specs
from specd.pipeline.typed import check_names, check_typed
from specd.pipeline.workflow import check_includes, load_workflow
from specd.resources import builtin
from specd.tasks.project import Project

NAMES = ("pipeline.json", "pipeline.yaml", "pipeline.yml")


def find_pipeline_file(project: Project) -> tuple[Path, bool]:
    """The project's file replaces the built-in default whole; nothing is merged."""
    present = [project.specd_dir / n for n in NAMES if (project.specd_dir / n).is_file()]
    if len(present) > 1:
        raise ConfigError(
            f"{project.specd_dir}: found {' and '.join(p.name for p in present)}; specd reads only one",
            fix=f"delete or rename all but one of them (keep the one you edit: {present[0].name}?)",
        )
    if present:
        return present[0], False
    return builtin("pipelines", "default.json"), True


def load_pipeline(project: Project) -> PipelineConfig:
    path, is_builtin = find_pipeline_file(project)
    return load_pipeline_file(path, project, builtin=is_builtin)


def load_pipeline_file(path: Path, project: Project, *, builtin: bool = False) -> PipelineConfig:
    try:
        return _load(path, project, builtin)
    except RecursionError:  # YAML aliases can nest deeper than the text shows; parse.py checks the text
        raise ConfigError(f"{path}: nested too deeply (YAML anchors and aliases that refer to each other?)",
                          fix="write the nested parts out instead of referring to them with aliases") from None


def _load(path: Path, project: Project, builtin: bool) -> PipelineConfig:
    data = read_data(path)
    warnings = check_version(path, data)
    warnings += _schema_pass(path, data, project)
    warnings += check_semantics(path, data)
    check_step_agents(path, data)  # an agent per step (issue 30)
    warnings += specdacular_phase_loop(path, data)
    config = _build(path, data, builtin, tuple(warnings))
    _check_workflows(config, project)
    if not builtin:  # kept so answers to a run still work while this file is being edited (snapshot.py)
        snapshot.keep(project, snapshot.canonical(data), config.digest)
    return config


def last_loaded_pipeline(project: Project, digest: str | None) -> PipelineConfig | None:
    """The pipeline a run last loaded (by its digest), when the file itself cannot be read now."""
    data = snapshot.last_loaded(project, digest)
    if data is None:
        return None
    try:
        path, _ = find_pipeline_file(project)
    except ConfigError:  # both a .json and a .yaml: name the one specd would have read
        path = project.specd_dir / NAMES[0]
    return _build(path, data, False, ("the pipeline file is broken; this is the copy the run last loaded",))


def _schema_pass(path: Path, data: dict[str, Any], project: Project) -> list[str]:
    try:
        entry = cache.key(path, path.read_bytes())
    except OSError:
        return _checked(path, data)
    remembered = cache.lookup(project, entry)
    if remembered is not None:
        return remembered
    warnings = _checked(path, data)  # raises on a real error: only a file that passed is remembered
    cache.remember(project, entry, warnings)
    return warnings


def _checked(path: Path, data: dict[str, Any]) -> list[str]:
    """The JSON Schema, then `output:` and `when:` (issue 30): both depend on the file's bytes alone, so a file
    that passed once is not checked again (and `status` imports neither jsonschema nor jinja2 for it)."""
    warnings = check_schema(path, data)
    check_typed(path, data)
    return warnings


def _build(path: Path, data: dict[str, Any], is_builtin: bool, warnings: tuple[str, ...]) -> PipelineConfig:
    pipelines = {
        name: tuple(_step(raw, json_path(["pipelines", name, i])) for i, raw in enumerate(steps))
        for name, steps in data["pipelines"].items()
    }
    hooks = {point: _hook(spec) for point, spec in hook_specs(data.get("hooks"), GLOBAL_POINTS).items()}
    canonical = snapshot.canonical(data)
    return PipelineConfig(
        source=path.resolve(),
        builtin=is_builtin,
        schema_version=str(data.get("schema_version", "1.0")),
        mode=data.get("mode"),
        hooks=frozen_map(hooks),
        pipelines=frozen_map(pipelines),
        agent=frozen_map(data.get("agent")),
        digest=snapshot.digest_of(canonical),
        warnings=warnings,
        notify=frozen_map(data["notify"]) if isinstance(data.get("notify"), dict) else None,
    )


def _hook(raw: Any) -> HookSpec | None:
    return None if raw is None else HookSpec.create(raw)


def _step(raw: dict[str, Any], where: str) -> Step:
    return Step(
        name=raw["name"],
        where=where,
        workflow=raw.get("workflow"),
        pipeline=raw.get("pipeline"),
        enabled=raw.get("enabled", True),
        pause_in_semi_auto=raw.get("pause_in_semi_auto", raw.get("pause", False)),
        description=raw.get("description"),
        hooks=frozen_map({point: _hook(spec) for point, spec in hook_specs(raw.get("hooks"), STEP_POINTS).items()}),
        model=raw.get("model"),
        max_turns=raw.get("max_turns"),
        outcomes=frozen_map(raw.get("outcomes")),
        max_visits=raw.get("max_visits"),
        foreach=raw.get("foreach"),
        stage=raw.get("stage"),
        timeout=float(raw["timeout"]) if raw.get("timeout") is not None else None,
        on_reject=raw.get("on_reject"),
        output=raw.get("output"),
        when=raw.get("when"),
        checks=check_specs(raw.get("checks")),
        attempts=raw.get("attempts"),
        agent=frozen_map(raw["agent"]) if isinstance(raw.get("agent"), dict) else None,
        read_only=raw.get("read_only") is True,
        members=tuple(_step(member, f"{where}.parallel[{j}]") for j, member in enumerate(raw.get("parallel") or ())),
        combine=combine_rules(raw.get("combine")) if "parallel" in raw else (),
        combine_rule=raw.get("combine"),
    )


def _check_workflows(config: PipelineConfig, project: Project) -> None:
    """Every workflow named must exist now, not when the run reaches it hours later."""
    problems: list[str] = []
    specs = [(f"hooks.{p}", s) for p, s in config.hooks.items()]
    every = [s for steps in config.pipelines.values() for step in steps for s in (step, *step.members)]
    names = {step.name for step in every}
    for step in every:
        if step.workflow:
            try:
                found = resolve_workflow(step.workflow, project, where=f"{config.source}: {step.where}.workflow")
                if found.origin == "project":
                    check_includes(found.path)
                    check_names(found.path, names)  # {{ steps.NAME... }} names a step of this file (issue 30)
            except ConfigError as exc:
                problems.append(exc.message)
        specs += [(f"{step.where}.hooks.{p}", s) for p, s in step.hooks.items()]
    if not problems:
        problems += _group_outcomes(config, project)
    for where, spec in specs:
        if spec is not None and spec.workflow:
            try:
                resolve_workflow(spec.workflow, project, where=f"{config.source}: {where}", hook=True)
            except ConfigError as exc:
                problems.append(exc.message)
    if problems:
        raise ConfigError("\n".join(problems),
                          fix="create the missing files, correct the names, or fix the includes named above")


def _group_outcomes(config: PipelineConfig, project: Project) -> list[str]:
    """Every outcome a group combines must be one each member's workflow declares (groups.py)."""
    problems: list[str] = []
    for name, steps in config.pipelines.items():
        for i, step in enumerate(steps):
            line = line_of(config.source, ["pipelines", name, i, "combine"]) if step.members else None
            where = f"{config.source}{f':{line}' if line else ''}: {step.where}.combine"
            for member in step.members:
                try:
                    found = resolve_workflow(member.workflow or "", project, where=f"{config.source}: {member.where}")
                    declared = tuple(load_workflow(found.path).outcomes or ())
                except ConfigError as exc:
                    problems.append(exc.message)
                    continue
                problems += outcome_problems(where, step.name, step.combine, member.name, declared)
    return problems
