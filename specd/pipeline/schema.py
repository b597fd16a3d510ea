"""The version gate and the JSON Schema pass, turned into messages a person can act on."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # jsonschema costs ~100 ms to import; only a schema pass that really runs pays it
    from jsonschema import Draft202012Validator, ValidationError

from specd import DISTRIBUTION
from specd.errors import ConfigError, closest
from specd.pipeline.limits import json_path
from specd.pipeline.step_checks import hint
from specd.resources import builtin

SUPPORTED_MAJOR = 1


def check_version(path: Path, data: dict[str, Any]) -> list[str]:
    """Runs before anything else, so a file from a future specd fails with the right fix."""
    raw = data.get("schema_version")
    if raw is None:
        return [f'{path}: no schema_version; add "schema_version": "1.0" so future specd releases can '
                "read this file safely"]
    major = str(raw).strip().split(".")[0]
    if not re.fullmatch(r"[0-9]{1,6}", major):  # ASCII only: "²".isdigit() is True, int("²") fails
        raise ConfigError(
            f"{path}: schema_version: {raw!r} is not a version number",
            fix='write it as "1.0"',
        )
    if int(major) != SUPPORTED_MAJOR:
        raise ConfigError(
            f"{path}: schema_version: {raw!r} is not supported; this specd reads 1.x",
            fix=f'upgrade specd (`pip install -U {DISTRIBUTION}`) to read it, or rewrite the file for "1.0"',
        )
    return []


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(builtin("schemas", "pipeline.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


@cache
def _part_validator(name: str) -> Draft202012Validator:
    """One definition of the pipeline schema on its own, for the same block written in another file."""
    from jsonschema import Draft202012Validator

    schema = json.loads(builtin("schemas", "pipeline.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def check_part(path: Path, data: Any, name: str, at: tuple[str, ...]) -> None:
    """``data``, found at ``at`` in ``path`` (e.g. `notify` in .specd/config.json), against ``$defs/<name>``,
    with the messages and the exit code of the pipeline file's own check."""
    _raise(path, *_problems(path, _part_validator(name), data, at))


def check_schema(path: Path, data: dict[str, Any]) -> list[str]:
    """Raise on every error, unknown keys included: a typo such as ``enabeld`` must not let a step run
    that was meant to be off. Returns the warnings (none today; kept for the schema cache's entries)."""
    _raise(path, *_problems(path, _validator(), data, ()))
    return []


def _problems(path: Path, validator: Draft202012Validator, data: Any, at: tuple[str, ...]) -> tuple[list[str], bool]:
    problems: list[str] = []
    unknown = False
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        for leaf in _leaves(error):
            where = json_path([*at, *leaf.absolute_path])
            if leaf.validator == "additionalProperties" and isinstance(leaf.instance, dict):
                known = set(_schema_of(leaf).get("properties", {}))
                for key in sorted(set(leaf.instance) - known, key=str):
                    unknown = True
                    problems.append(_unknown(path, [*at, *leaf.absolute_path, key], known))
            else:
                problems.append(f"{_at_line(path, [*at, *leaf.absolute_path])}: {where}: {_describe(leaf)}"
                                + hint([*at, *leaf.absolute_path]))
    return problems, unknown


def _raise(path: Path, problems: list[str], unknown: bool) -> None:
    if problems:
        fix = "correct the values named above; `specd pipeline show` prints the built-in pipeline as an example"
        if unknown:  # an unknown key would be ignored, so a typo would change what runs without a word
            fix = "rename or remove the unknown keys named above" + ("" if all(
                ": unknown key " in p for p in problems) else f"; {fix}")
        raise ConfigError("\n".join(dict.fromkeys(problems)), fix=fix)


def _at_line(path: Path, parts: list[Any]) -> str:
    """``file:line`` of the key a wrong value is written under (the nearest one, for a list item)."""
    from specd.pipeline.keys import line_near

    line = line_near(path, parts)
    return f"{path}:{line}" if line else str(path)


def _unknown(path: Path, parts: list[Any], known: set[str]) -> str:
    from specd.pipeline.keys import line_of

    key = str(parts[-1])
    line = line_of(path, parts)
    close = closest(key, sorted(known))
    hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(known))})"
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}: unknown key {key!r}{hint}"


def _leaves(error: ValidationError) -> list[ValidationError]:
    """For anyOf (hook specs) given an object, report what is wrong inside the object branch."""
    if error.validator != "anyOf" or not isinstance(error.instance, dict):
        return [error]
    options = cast(list[dict[str, Any]], error.validator_value)
    index = next((i for i, o in enumerate(options) if o.get("type") == "object"), None)
    branch = [e for e in error.context or [] if e.relative_schema_path and e.relative_schema_path[0] == index]
    return [leaf for e in branch for leaf in _leaves(e)] or [error]


def _schema_of(error: ValidationError) -> dict[str, Any]:
    return error.schema if isinstance(error.schema, dict) else {}


def _describe(error: ValidationError) -> str:
    v, value = error.validator, cast(Any, error.validator_value)
    if v == "required":
        missing = [k for k in value if isinstance(error.instance, dict) and k not in error.instance]
        return f"missing required key {missing[0]!r}" if missing else error.message
    if v == "enum":
        return f"{error.instance!r} is not allowed; expected one of: {', '.join(map(str, value))}"
    if v == "type":
        return f"expected {value if isinstance(value, str) else ' or '.join(value)}, got {error.instance!r}"
    if v == "anyOf":
        return (f"{error.instance!r} is not a hook: expected null, a path to a .md file, or an object "
                "with workflow or run, mode, optional, timeout")
    if v == "pattern":
        return f"{error.instance!r} is not a valid name: use letters, digits, '-', '_' and '.'"
    if v == "maxLength":
        return (f"{str(error.instance)[:40]!r}… is {len(str(error.instance))} characters; names are at most "
                f"{value} (they become parts of file names)")
    if v == "minItems":  # a pipeline's steps (pipelines.<name>), or a list inside a step, or notify.on
        return "must list at least one " + ("step" if len(error.absolute_path) == 2 and
                                            error.absolute_path[0] == "pipelines" else "value")
    return error.message
