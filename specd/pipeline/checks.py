"""Semantic checks the JSON Schema cannot express."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.pipeline.groups import group_problems
from specd.pipeline.limits import json_path
from specd.pipeline.model import GLOBAL_POINTS, STEP_POINTS, TARGETS, hook_specs
from specd.pipeline.step_checks import step_problems

JAIL_KEYS = ("sandbox", "network", "env_allow")


def check_semantics(path: Path, data: dict[str, Any]) -> list[str]:
    """Raise ConfigError listing every problem; return warnings."""
    pipelines: dict[str, list[dict[str, Any]]] = data["pipelines"]
    problems: list[str] = []
    warnings: list[str] = []
    for point, spec in hook_specs(data.get("hooks"), GLOBAL_POINTS).items():
        problems += _hook_problems(path, ["hooks", point], spec)
    for name, steps in pipelines.items():
        seen: dict[str, int] = {}
        names = {s["name"] for s in steps}
        taken = set(names)  # member names join them (groups.py)
        for i, step in enumerate(steps):
            where = json_path(["pipelines", name, i])
            label = f"{path}: {where} (step {step['name']!r})"
            if step["name"] in seen:
                problems.append(f"{label}: duplicate step name; pipelines.{name}[{seen[step['name']]}] "
                                "has the same name. Step names must be unique within a pipeline")
            seen.setdefault(step["name"], i)
            has_wf, has_ref = "workflow" in step, "pipeline" in step
            if has_wf and has_ref:
                problems.append(f"{label}: has both 'workflow' and 'pipeline'; keep exactly one")
            elif not has_wf and not has_ref and "parallel" not in step:
                problems.append(f"{label}: needs 'workflow' (a .md file) or 'pipeline' (a pipeline name)")
            elif has_ref and step["pipeline"] not in pipelines:
                problems.append(f"{path}: {where}.pipeline: pipeline {step['pipeline']!r} is not defined "
                                f"(defined: {', '.join(pipelines)})")
            if "foreach" in step and not has_ref:
                problems.append(f"{label}: 'foreach' only works on a step with 'pipeline'")
            if "pause" in step and "pause_in_semi_auto" in step and step["pause"] != step["pause_in_semi_auto"]:
                warnings.append(f"{label}: both 'pause' and 'pause_in_semi_auto' are set and disagree; "
                                "'pause_in_semi_auto' wins")
            for outcome, target in (step.get("outcomes") or {}).items():
                if target not in TARGETS and target not in names:
                    problems.append(
                        f"{path}: {where}.outcomes.{outcome}: target {target!r} is neither one of "
                        f"{', '.join(TARGETS)} nor a step of pipeline {name!r} ({', '.join(sorted(names))})")
            if has_ref and step.get("hooks"):
                warnings.append(f"{label}: hooks on a pipeline reference never run; put them on the steps "
                                "inside the referenced pipeline")
            for point, spec in hook_specs(step.get("hooks"), STEP_POINTS).items():
                problems += _hook_problems(path, ["pipelines", name, i, "hooks", point], spec)
            problems += group_problems(path, ["pipelines", name, i], step, taken)  # parallel groups (issue 30)
            found, said = step_problems(path, name, i, step)  # checks: and attempts: (step_checks.py)
            problems, warnings = problems + found, warnings + said
    if not problems:
        problems += _cycles(path, pipelines)
    if problems:
        raise ConfigError("\n".join(problems), fix="correct the places named above")
    reachable = _reachable(pipelines)
    warnings += [f"{path}: pipelines.{name} is never referenced from main and will not run"
                 for name in pipelines if name not in reachable]
    return warnings


def _hook_problems(path: Path, parts: list[Any], spec: Any) -> list[str]:
    if isinstance(spec, dict) and ("workflow" in spec) == ("run" in spec):
        return [f"{path}: {json_path(parts)}: a hook object needs exactly one of 'workflow' or 'run'"]
    if isinstance(spec, dict) and "workflow" in spec:
        return [f"{path}: {json_path([*parts, key])}: only a 'run' hook has its own jail; a workflow hook runs in "
                "the agent's (set it in the agent block)" for key in JAIL_KEYS if key in spec]
    return []


def _refs(steps: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(i, s["pipeline"]) for i, s in enumerate(steps) if "pipeline" in s]


def _cycles(path: Path, pipelines: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Depth-first search, iterative (a chain of 1,000+ references must not hit the recursion limit);
    report each cycle once with the path that forms it."""
    done: set[str] = set()
    found: list[str] = []
    for root in pipelines:
        if root in done:
            continue
        # Each entry: a pipeline on the current trail, the place that led to it, and its remaining refs.
        trail: list[tuple[str, str, list[tuple[int, str]]]] = [(root, "", list(reversed(_refs(pipelines[root]))))]
        while trail:
            name, _, todo = trail[-1]
            if not todo:
                done.add(name)
                trail.pop()
                continue
            i, target = todo.pop()
            place = f"pipelines.{name}[{i}].pipeline"
            names = [n for n, _, _ in trail]
            if target in names:
                start = names.index(target)
                cycle = " → ".join([*names[start:], target])
                places = [p for _, p, _ in trail[start + 1:]] + [place]
                found.append(f"{path}: reference cycle {cycle} (at {', '.join(places)})")
            elif target not in done:
                trail.append((target, place, list(reversed(_refs(pipelines[target])))))
    return list(dict.fromkeys(found))


def _reachable(pipelines: dict[str, list[dict[str, Any]]]) -> set[str]:
    seen, todo = set(), ["main"]
    while todo:
        name = todo.pop()
        if name not in seen and name in pipelines:
            seen.add(name)
            todo += [target for _, target in _refs(pipelines[name])]
    return seen
