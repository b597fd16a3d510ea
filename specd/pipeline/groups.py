"""Read-only steps side by side (issue 30): a `parallel` group as the file writes it, and what the schema cannot say.

A group is one entry of a pipeline: ``{"name": "reviews", "parallel": [steps], "combine": RULE}``. Its members
run at the same time (specd/engine/group.py), so each must be `read_only: true`: none of them can change what
another one reads, and no commit has to pick apart whose writes are whose. A member is a workflow step with its
own agent and output; what would need the member to be a step of the pipeline on its own (hooks, checks,
routing, loops, conditions) belongs on the group instead, and is refused at its line.

``combine`` names how the members' outcomes become the group's: ``any-revise`` (revise when any member says
revise, else approve), ``all-approve`` (approve only when every member approves, else revise), or a map from
an outcome to ``any`` or ``all``, tried in the order written: ``{"reject": "any", "revise": "any", "approve":
"all"}``. The map's keys are the only outcomes a member may report, and every member's workflow must declare
each of them (checked once the workflows are found, in ``outcome_problems``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from specd.errors import closest
from specd.pipeline.keys import Part, line_near
from specd.pipeline.limits import json_path

RULES: Mapping[str, tuple[tuple[str, str], ...]] = {
    "any-revise": (("revise", "any"), ("approve", "all")),
    "all-approve": (("approve", "all"), ("revise", "any")),
}
QUANTIFIERS = ("any", "all")
# Keys a group itself cannot have: it runs no workflow of its own.
NOT_ON_GROUP = ("workflow", "pipeline", "foreach", "checks", "attempts", "output", "agent", "model", "max_turns",
                "timeout", "read_only")
# Keys a member cannot have: each would make the member a step of the pipeline in its own right.
NOT_ON_MEMBER = ("parallel", "combine", "pipeline", "foreach", "hooks", "checks", "attempts", "outcomes",
                 "max_visits", "pause", "pause_in_semi_auto", "on_reject", "when", "stage")
EXAMPLE = ('{"name": "reviews", "parallel": [{"name": "security", "workflow": "review.md", "read_only": true}, '
           '...], "combine": "any-revise"}')


def every_step(pipelines: Mapping[str, list[dict[str, Any]]]) -> Iterator[tuple[list[Part], dict[str, Any]]]:
    """Every step of the file with its JSON path, a group's members right after their group."""
    for name, steps in pipelines.items():
        for i, step in enumerate(steps):
            yield ["pipelines", name, i], step
            for j, member in enumerate(step.get("parallel") or ()):
                if isinstance(member, dict):
                    yield ["pipelines", name, i, "parallel", j], member


def combine_rules(raw: Any) -> tuple[tuple[str, str], ...]:
    """A validated `combine` as (outcome, quantifier) rules in the order they are tried."""
    if isinstance(raw, str):
        return RULES[raw]
    return tuple((str(outcome), str(quantifier)) for outcome, quantifier in (raw or {}).items())


def group_problems(path: Path, parts: list[Part], step: Mapping[str, Any], names: set[str]) -> list[str]:
    """What is wrong with a group entry (or with `combine`/`read_only` where no group is), each at its line."""
    problems: list[str] = []
    if "parallel" not in step:
        if "combine" in step:
            problems.append(_at(path, [*parts, "combine"], "'combine' belongs on a group: add \"parallel\": "
                                "[read-only steps] to this entry, or remove 'combine'"))
        return problems
    if "combine" not in step:
        problems.append(_at(path, [*parts, "parallel"], "a parallel group needs 'combine' (any-revise, all-approve, "
                            'or a map such as {"revise": "any", "approve": "all"})'))
    problems += [_at(path, [*parts, key], f"'{key}' does not work on a parallel group (it runs no workflow of its "
                     "own); put it on its members, or make this entry an ordinary step")
                 for key in NOT_ON_GROUP if key in step]
    problems += _combine_problems(path, [*parts, "combine"], step.get("combine"))
    for j, member in enumerate(step["parallel"]):
        at = [*parts, "parallel", j]
        label = f"member {member.get('name')!r} of group {step['name']!r}"
        if member.get("read_only") is not True:
            problems.append(_at(path, [*at, "read_only"] if "read_only" in member else at,
                                f"{label} is not read-only; steps run side by side only when none of them can "
                                "write: add \"read_only\": true to it, or move it out of the group"))
        problems += [_at(path, [*at, key], f"'{key}' does not work on {label}: "
                         + ("groups do not nest" if key in ("parallel", "combine") else
                            "put it on the group, which is the step the pipeline routes")) for key in NOT_ON_MEMBER
                     if key in member]
        if "workflow" not in member and "pipeline" not in member:
            problems.append(_at(path, at, f"{label} needs 'workflow' (a .md file)"))
        if member.get("name") in names:
            problems.append(_at(path, [*at, "name"], f"{label}: the pipeline already has a step named "
                                f"{member['name']!r}; names are unique within a pipeline, members included"))
        names.add(str(member.get("name")))
    return problems


def _combine_problems(path: Path, parts: list[Part], raw: Any) -> list[str]:
    if isinstance(raw, str) and raw not in RULES:
        close = closest(raw, list(RULES))
        hint = f"did you mean {close[0]!r}? " if close else ""
        return [_at(path, parts, f"unknown combine rule {raw!r}; {hint}use any-revise, all-approve, or a map from "
                    'an outcome to any or all, such as {"revise": "any", "approve": "all"}')]
    if isinstance(raw, Mapping) and len(raw) < 2:
        return [_at(path, parts, "a combine map needs at least two outcomes (with one, the group could never end "
                    'any other way), such as {"revise": "any", "approve": "all"}')]
    return []


def outcome_problems(where: str, group: str, combine: tuple[tuple[str, str], ...], member: str,
                     declared: tuple[str, ...]) -> list[str]:
    """A combine outcome the member's workflow does not declare: the member could never give it."""
    gives = declared or ("done",)
    missing = [outcome for outcome, _ in combine if outcome not in gives]
    if not missing:
        return []
    return [f"{where}: group {group!r} combines {', '.join(repr(o) for o, _ in combine)}, but member {member!r} "
            f"cannot give {', '.join(map(repr, missing))} (its workflow's outcomes: {', '.join(gives)}); add them to "
            "the workflow's frontmatter `outcomes:`, or change the group's combine"]


def _at(path: Path, parts: list[Part], why: str) -> str:
    """``file:line: json.path: why``; a member (a list item, no key of its own) is shown at its name's line."""
    line = line_near(path, parts if isinstance(parts[-1], str) else [*parts, "name"])
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}: {why}"
