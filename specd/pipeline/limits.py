"""What every reader of a pipeline file shares: its size limits, their errors, and how a place in it is named.

Below parse.py, yaml12.py and keys.py, so none of them needs another.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from specd.errors import ConfigError

MAX_DEPTH = 100  # a real pipeline nests about 6 deep; past this, parsers and validators recurse too far
MAX_NODES = 200_000  # values with aliases expanded; a real pipeline has a few hundred
_LONG_NUMBER = re.compile(r"[0-9]{4300,}")


def nesting(value: Any) -> int:
    """How many lists and objects deep ``value`` goes (0 for a plain value), counted without recursion: what an
    agent reports is the model's to shape, and specd's redaction, validation and records walk it recursively."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, (list, tuple)):
            deepest = max(deepest, depth + 1)
            todo += [(part, depth + 1) for part in item]
    return deepest


def too_deep(path: Path, line: int, column: int) -> ConfigError:
    return ConfigError(f"{path}:{line}:{column}: nested more than {MAX_DEPTH} levels deep",
                       fix="a pipeline needs a handful of levels; remove the extra brackets or indentation")


def long_number(path: Path, text: str) -> ConfigError:
    found = _LONG_NUMBER.search(text)
    where = f"{path}:{text.count(chr(10), 0, found.start()) + 1}" if found else str(path)
    return ConfigError(f"{where}: a number with more than 4,300 digits",
                       fix="use a smaller number (or write it as a quoted string)")


def json_path(parts: Any) -> str:
    """``['pipelines', 'main', 2, 'workflow']`` → ``pipelines.main[2].workflow``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"
