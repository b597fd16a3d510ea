"""Where each key of a pipeline file is written: the line of a JSON path, and keys written twice.

``json.loads`` keeps the last of two equal keys and says nothing; YAML files already refuse them
(yaml12.py). This scan walks the JSON text once, tracking the path of every key, so a duplicate and an
unknown key are reported at their line. It runs only when something is to be reported (or, for
duplicates, only when the parse saw one), so loading a good file pays nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from specd.errors import ConfigError
from specd.pipeline.limits import json_path

Part = str | int
Located = tuple[tuple[Part, ...], int]  # a key's full path, and the 1-based line it is written on


def json_keys(text: str) -> Iterator[Located]:
    """Every object key in ``text`` (valid JSON) with its path and line, in file order."""
    stack: list[list[Part | bool]] = []  # per open container: [kind, current key or index, expecting a key]
    line, i, size = 1, 0, len(text)
    while i < size:
        char = text[i]
        if char == "\n":
            line += 1
        elif char == '"':
            end = _string_end(text, i)
            if stack and stack[-1][0] == "{" and stack[-1][2]:
                key = json.loads(text[i:end + 1])
                stack[-1][1], stack[-1][2] = key, False
                yield tuple(frame[1] for frame in stack), line
            line += text.count("\n", i, end)
            i = end
        elif char in "{[":
            stack.append([char, 0 if char == "[" else "", char == "{"])
        elif char in "}]":
            stack.pop()
        elif char == "," and stack:
            if stack[-1][0] == "[":
                stack[-1][1] = int(stack[-1][1]) + 1
            else:
                stack[-1][2] = True
        i += 1


def _string_end(text: str, start: int) -> int:
    """Index of the quote that closes the string opening at ``start``."""
    i = start + 1
    while True:
        i = text.index('"', i)
        backslashes = 0
        while text[i - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return i
        i += 1


def refuse_duplicates(path: Path, text: str) -> None:
    """Raise naming both lines of the first key written twice in one JSON object."""

    seen: dict[tuple[Part, ...], int] = {}
    for where, line in json_keys(text):
        if where in seen:
            raise ConfigError(f"{path}:{line}: {json_path(where)}: duplicate key {where[-1]!r} (first at line "
                              f"{seen[where]}, again at line {line}); JSON keeps only the last one",
                              fix="keep one of the two keys")
        seen[where] = line


def line_of(path: Path, parts: Sequence[Part]) -> int | None:
    """The line where the key at ``parts`` is written in the pipeline file, if it can be told."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    wanted = tuple(parts)
    if path.suffix in (".yaml", ".yml"):
        return _yaml_line(text, wanted)
    try:
        return next((line for where, line in json_keys(text) if where == wanted), None)
    except (ValueError, IndexError):  # not the JSON the scan expects; the message goes without a line
        return None


def _yaml_line(text: str, wanted: tuple[Part, ...]) -> int | None:
    import yaml

    from specd.pipeline.yaml12 import Yaml12Loader

    try:
        node = yaml.compose(text, Loader=Yaml12Loader)
    except yaml.YAMLError:
        return None
    line = None
    for part in wanted:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                return None
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
    return line


def line_near(path: Path, parts: Sequence[Part]) -> int | None:
    """The line of the key at ``parts``, else of the nearest key above it: a list item (``checks[1]``) has
    no key of its own, so it is shown at its list's key."""
    for end in range(len(parts), 0, -1):
        if isinstance(parts[end - 1], str):
            line = line_of(path, parts[:end])
            if line is not None:
                return line
    return None
