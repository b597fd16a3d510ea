"""YAML pipeline files, read the way YAML 1.2 users expect (see parse.py for why pyyaml and this loader).

Its own module so that reading a JSON pipeline, and every read-only command on
one, never imports yaml.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from specd.errors import ConfigError
from specd.pipeline.limits import MAX_DEPTH, MAX_NODES, long_number, too_deep


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema booleans and a duplicate-key check."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                first = seen[key].start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first}, again at line "
                    f"{key_node.start_mark.line + 1})", key_node.start_mark)
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


# YAML 1.1 reads yes/no/on/off (any case) as booleans; YAML 1.2 only true/false.
Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load(path: Path, text: str) -> Any:
    try:
        _check_yaml_depth(path, text)
        return yaml.load(text, Loader=Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or exc.context or "syntax error"
        fix = ("keep one of the two keys" if problem.startswith("duplicate key")
               else "fix the syntax at that line (indentation and unquoted ':' are the usual causes)")
        raise ConfigError(f"{where}: invalid YAML: {problem}", fix=fix) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}", fix="fix the YAML syntax") from None
    except ValueError:  # int() refuses more than 4,300 digits
        raise long_number(path, text) from None
    except RecursionError:  # aliases can still build deep structures; the depth check saw only the text
        raise ConfigError(f"{path}: nested too deeply", fix=f"nest at most {MAX_DEPTH} levels") from None


def _check_yaml_depth(path: Path, text: str) -> None:
    """The parser is iterative; the composer that follows is recursive. Count depth on the events,
    refuse an alias inside its own anchor (a structure containing itself), and count nodes with aliases
    expanded, because the digest and the schema check walk them expanded ("billion laughs")."""
    open_anchors: list[str | None] = []
    sizes: list[int] = [0]  # nodes inside each open collection, aliases expanded
    anchored: dict[str, int] = {}
    for event in yaml.parse(text, Loader=Yaml12Loader):
        mark = event.start_mark
        where = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            open_anchors.append(event.anchor)
            sizes.append(1)
            if len(open_anchors) > MAX_DEPTH:
                raise too_deep(path, *where)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_anchors.pop(), sizes.pop()
            sizes[-1] += size
            if anchor:
                anchored[anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise ConfigError(f"{path}:{where[0]}:{where[1]}: alias *{event.anchor} refers to the structure "
                                  "that contains it", fix="write that part out instead of referring to itself")
            sizes[-1] += anchored.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            sizes[-1] += 1
            if event.anchor:
                anchored[event.anchor] = 1
        if sizes[-1] > MAX_NODES:
            raise ConfigError(f"{path}:{where[0]}:{where[1]}: more than {MAX_NODES:,} values once aliases are "
                              "expanded", fix="write the repeated parts out, or use fewer nested aliases")
