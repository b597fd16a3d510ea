"""Test files for a pipeline (`.specd/tests/*.yaml`): read, checked against their schema, made into cases.

A test file is read like the pipeline file (YAML 1.2 or JSON, duplicate keys refused) and held to
``schemas/pipeline-test.schema.json`` with strict keys, so a typo in a case (``outcom:``) is an error at
its line instead of a case that silently tests less than it says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specd.errors import ConfigError, did_you_mean
from specd.pipeline.keys import line_of
from specd.pipeline.limits import json_path
from specd.pipeline.parse import read_data
from specd.resources import builtin, builtin_dir

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

FIX = "see `specd test --help` for the format (or `specd test --record TASK` to write one from a run)"


@dataclass(frozen=True)
class Place:
    """One step the run takes: its name, its phase (None outside a phase loop), and its outcome if said."""

    step: str
    phase: str | None = None
    outcome: str | None = None

    @classmethod
    def parse(cls, raw: str | dict[str, str]) -> Place:
        if isinstance(raw, str):  # `step@phase`, or `step@phase: outcome` written as one string
            text, _, said = raw.partition(":")
            outcome = said.strip() or None
        else:  # YAML reads `- review@01: revise` as a one-key mapping
            text, outcome = next(iter(raw.items()))
        step, _, phase = text.strip().partition("@")
        return cls(step, phase or None, outcome)

    def shown(self, with_outcome: bool = True) -> str:
        where = f"{self.step}@{self.phase}" if self.phase else self.step
        return f"{where}: {self.outcome}" if with_outcome and self.outcome else where

    def fits(self, actual: Place) -> bool:
        """The same step and phase; the outcome only where the case names one."""
        return (self.step, self.phase) == (actual.step, actual.phase) and self.outcome in (None, actual.outcome)


@dataclass(frozen=True)
class Case:
    name: str
    source: Path  # the test file, for messages
    description: str
    mode: str
    files: dict[str, str]
    replies: list[dict[str, Any]]  # `steps:` as written
    path: list[Place]
    status: str
    waiting: str | None
    index: int = 0  # where the case is in its file's `cases`, for messages
    answers: tuple[str, ...] = ()  # one per hold, in order: approve, skip, `reject: note`
    holds: tuple[str, ...] | None = None  # what each answered hold waited for; None: not checked


def load_cases(path: Path) -> list[Case]:
    """Every case of the test file at ``path``; ConfigError (exit 2) naming file:line and the fix."""
    data = read_data(path)
    problems = [_problem(path, error) for error in sorted(_validator().iter_errors(data), key=lambda e: e.path)]
    if problems:
        raise ConfigError("\n".join(dict.fromkeys(problems)), fix=FIX)
    cases = [_case(path, raw, i) for i, raw in enumerate(data["cases"])]
    names = [case.name for case in cases]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigError(f"{path}: cases named twice: {', '.join(twice)}", fix="give every case its own name")
    return cases


def check_steps(cases: list[Case], names: set[str]) -> None:
    """A reply or a place naming no step of the pipeline is a typo that would only make the case fail later,
    far from its cause: exit 2 at its line, with "did you mean"."""
    known = sorted(names)
    problems: list[str] = []
    for case in cases:
        index = case.index
        for j, reply in enumerate(case.replies):
            if reply["step"] not in names:
                problems.append(f"{_at(case.source, ['cases', index, 'steps', j, 'step'])}: no step named "
                                f"{reply['step']!r} in the pipeline" + did_you_mean(reply["step"], known))
        for j, place in enumerate(case.path):
            if place.step not in names:
                problems.append(f"{_at(case.source, ['cases', index, 'expect', 'path', j])}: no step named "
                                f"{place.step!r} in the pipeline" + did_you_mean(place.step, known))
    if problems:
        raise ConfigError("\n".join(problems), fix="name the steps as the pipeline file does (`specd pipeline show`)")


def test_files(folder: Path) -> list[Path]:
    """The test files in ``folder``, sorted: *.yaml, *.yml and *.json."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.is_file())


def builtin_tests() -> list[Path]:
    """The built-in pipeline's own tests, ``<pipeline>.tests.yaml`` beside it (shipped, and run in CI)."""
    return sorted(builtin_dir("pipelines").glob("*.tests.yaml"))


def _case(path: Path, raw: dict[str, Any], index: int) -> Case:
    expect = raw["expect"]
    return Case(name=raw["name"], source=path, description=raw.get("description", raw["name"]),
                mode=raw.get("mode", "auto"), files=dict(raw.get("files") or {}), replies=list(raw.get("steps") or []),
                path=[Place.parse(item) for item in expect["path"]], status=expect.get("status", "COMPLETE"),
                waiting=expect.get("waiting"), index=index, answers=tuple(raw.get("answers") or ()),
                holds=tuple(expect["holds"]) if "holds" in expect else None)


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(builtin("schemas", "pipeline-test.schema.json").read_text("utf-8")))


def _problem(path: Path, error: ValidationError) -> str:
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict) and isinstance(error.schema,
                                                                                                     dict):
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known), key=str)
        return "\n".join(f"{_at(path, [*parts, key])}: unknown key {key!r}"
                         + (did_you_mean(str(key), known) or f" (known: {', '.join(known)})") for key in unknown)
    if error.validator == "required":  # said at the object's first key: a list item has no line of its own
        first = next(iter(error.instance), None) if isinstance(error.instance, dict) else None
        return f"{_at(path, parts, first)}: {error.message}"
    if error.validator == "anyOf":  # a place in the path
        return (f"{_at(path, parts)}: {error.instance!r} is not a place in the path: write `step`, `step@phase` "
                "or `step@phase: outcome`")
    return f"{_at(path, parts)}: {error.message}"


def _at(path: Path, parts: list[Any], near: str | None = None) -> str:
    """``file:line: json.path``; the line of ``near`` (a key inside), else of the nearest key above."""
    keyed = [*parts, near] if near is not None else list(parts)
    while keyed and not isinstance(keyed[-1], str):
        keyed.pop()
    line = line_of(path, keyed) if keyed else None
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}"
