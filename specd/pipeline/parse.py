"""Read a pipeline file (JSON or YAML) into plain data, with line-accurate errors.

YAML is read the way YAML 1.2 users expect, with pyyaml (already a dependency)
and a loader of our own rather than ruamel.yaml: only ``true``/``false`` are
booleans (so a key ``on:`` or a step named ``no`` stays a string), and a key
written twice in one mapping is an error naming both lines, not a silent
override; JSON files get the same check (keys.py). Nesting deeper than any real pipeline and numbers over Python's
4,300-digit limit are refused with the place, before they can end in a
RecursionError or a ValueError deep inside a library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.pipeline.limits import MAX_DEPTH, long_number, too_deep


def read_data(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file", fix="check the path, or run `specd init`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})", fix="save it as UTF-8 text") from None
    if path.suffix in (".yaml", ".yml"):
        from specd.pipeline import yaml12  # only YAML files pay for importing yaml

        data = yaml12.load(path, text)
    else:
        data = _json(path, text)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level is {type(data).__name__ if data is not None else 'empty'}, "
            "not a mapping",
            fix='start the file with `schema_version: "1.0"` and a `pipelines:` mapping',
        )
    return data


def _json(path: Path, text: str) -> Any:
    _check_json_depth(path, text)
    twice: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _object(pairs, twice))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
            fix="fix the syntax at that line (a missing comma or quote is the usual cause)",
        ) from None
    except ValueError:  # int() refuses more than 4,300 digits
        raise long_number(path, text) from None
    if twice:  # as YAML files do: a key written twice is an error naming both lines, not a silent override
        from specd.pipeline.keys import refuse_duplicates

        refuse_duplicates(path, text)
    return data


def _object(pairs: list[tuple[str, Any]], twice: list[str]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) < len(pairs):
        twice.append(str(len(pairs)))  # only a flag: keys.py finds which key, and its lines, from the text
    return made


def _check_json_depth(path: Path, text: str) -> None:
    """Refuse nesting past MAX_DEPTH at the bracket that crosses it (json.loads would recurse)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth, in_string, escaped = 0, False, False
    for offset, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise too_deep(path, text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset))
        elif char in "]}":
            depth -= 1
