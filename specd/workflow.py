"""A workflow file: markdown with optional YAML frontmatter (description, outcomes, context, stage)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from specd.errors import ConfigError


@dataclass(frozen=True)
class Workflow:
    path: Path
    body: str
    description: str = ""
    outcomes: tuple[str, ...] = ("done",)
    context: tuple[str, ...] | None = None
    stage: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def load_workflow(path: Path) -> Workflow:
    try:
        post = frontmatter.load(str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read workflow ({exc})", fix="check the file exists and is UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # python-frontmatter hands YAML the text from just after the opening '---' (its line ending
        # included), so the mark's 0-based line N is the file's line N + 1.
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{line}: invalid YAML frontmatter ({exc})",
                          fix="fix the YAML between the '---' lines") from None
    meta = dict(post.metadata)
    outcomes = meta.get("outcomes", ["done"])
    if isinstance(outcomes, str):
        outcomes = [outcomes]
    if not isinstance(outcomes, list) or not all(isinstance(o, str) for o in outcomes):
        raise ConfigError(f"{path}: frontmatter 'outcomes' must be a list of names",
                          fix="write e.g. `outcomes: [approve, revise]`")
    context = meta.get("context")
    if context is not None and not (isinstance(context, list) and all(isinstance(c, str) for c in context)):
        raise ConfigError(f"{path}: frontmatter 'context' must be a list of task-relative paths",
                          fix="write e.g. `context: [FEATURE.md, ROADMAP.md]`")
    ordered = tuple(dict.fromkeys([*outcomes, "done"]))
    return Workflow(
        path=path,
        body=post.content.strip() + "\n",
        description=str(meta.get("description", "")).strip(),
        outcomes=ordered,
        context=tuple(context) if context is not None else None,
        stage=str(meta["stage"]) if meta.get("stage") else None,
        meta=meta,
    )
