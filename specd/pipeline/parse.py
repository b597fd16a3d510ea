"""Read a pipeline file (JSON or YAML) into plain data, with line-accurate errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from specd.errors import ConfigError


def read_data(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file", fix="check the path, or run `specd init`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})", fix="save it as UTF-8 text") from None
    data = _yaml(path, text) if path.suffix in (".yaml", ".yml") else _json(path, text)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level is {type(data).__name__ if data is not None else 'empty'}, "
            "not a mapping",
            fix='start the file with `schema_version: "1.0"` and a `pipelines:` mapping',
        )
    return data


def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
            fix="fix the syntax at that line (a missing comma or quote is the usual cause)",
        ) from None


def _yaml(path: Path, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError(
            f"{where}: invalid YAML: {problem}",
            fix="fix the syntax at that line (indentation and unquoted ':' are the usual causes)",
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}", fix="fix the YAML syntax") from None


def json_path(parts: Any) -> str:
    """``['pipelines', 'main', 2, 'workflow']`` → ``pipelines.main[2].workflow``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"
