"""A workflow file: markdown with optional YAML frontmatter (description, outcomes, context, stage)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.resources import builtin_dir
from specd.system.lazyre import lazy

# specdacular's workflows pull shared text in with a line `@~/.claude/specdacular/<kind>/<file>` (or
# `@./.claude/...` for a project-local install). Claude Code expands such lines; every other agent would
# see a dangling path. specd inlines its own equivalent instead, found by kind and file name.
INCLUDE = lazy(r"^[ \t]*@((?:~/|\./)?\.claude/specdacular/([\w.-]+)/(?:[\w.-]+/)*([\w.-]+))(.*)$", re.MULTILINE)
EQUIVALENTS = {"workflows": "workflows", "templates": "templates"}


@dataclass(frozen=True)
class Workflow:
    path: Path
    body: str
    description: str = ""
    outcomes: tuple[str, ...] = ()  # as declared in the frontmatter; none declared means only `done`
    context: tuple[str, ...] | None = None
    stage: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def load_workflow(path: Path) -> Workflow:
    import frontmatter  # imported here: read-only commands that never open a workflow skip yaml entirely
    import yaml

    try:
        post = frontmatter.load(str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read workflow ({exc})", fix="check the file exists and is UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # python-frontmatter hands YAML the text from just after the opening '---' (its line ending
        # included), so the mark's 0-based line N is the file's line N + 1.
        line = f":{mark.line + 1}" if mark else ""
        if line == "" and isinstance(exc, yaml.reader.ReaderError):  # a control character such as NUL
            line = _line_of(path, chr(exc.character) if isinstance(exc.character, int) else exc.character)
        raise ConfigError(f"{path}{line}: invalid YAML frontmatter ({' '.join(str(exc).split())})",
                          fix="fix the YAML between the '---' lines (remove control characters such as NUL)"
                          ) from None
    except ValueError:  # int() refuses more than 4,300 digits
        raise ConfigError(f"{path}{_line_of(path, re.compile(r'[0-9]{4300,}'))}: a number with more than 4,300 "
                          "digits in the frontmatter", fix="use a smaller number, or quote it as a string") from None
    except RecursionError:
        raise ConfigError(f"{path}: the frontmatter is nested too deeply",
                          fix="a workflow's frontmatter needs a few flat keys; remove the extra nesting") from None
    meta = dict(post.metadata)
    outcomes = meta.get("outcomes", [])
    if isinstance(outcomes, str):
        outcomes = [outcomes]
    if not isinstance(outcomes, list) or not all(isinstance(o, str) for o in outcomes):
        raise ConfigError(f"{path}: frontmatter 'outcomes' must be a list of names",
                          fix="write e.g. `outcomes: [approve, revise]`")
    context = meta.get("context")
    if context is not None and not (isinstance(context, list) and all(isinstance(c, str) for c in context)):
        raise ConfigError(f"{path}: frontmatter 'context' must be a list of task-relative paths",
                          fix="write e.g. `context: [FEATURE.md, ROADMAP.md]`")
    ordered = tuple(dict.fromkeys(outcomes))  # no implicit `done`: a review that declares its verdicts means them
    return Workflow(
        path=path,
        body=expand_includes(post.content, path).strip() + "\n",
        description=str(meta.get("description", "")).strip(),
        outcomes=ordered,
        context=tuple(context) if context is not None else None,
        stage=str(meta["stage"]) if meta.get("stage") else None,
        meta=meta,
    )


def _line_of(path: Path, what: str | re.Pattern[str]) -> str:
    """``:N`` for the first line of ``path`` holding ``what``, or "" when it cannot be told."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    found = what.search(text) if isinstance(what, re.Pattern) else None
    offset = found.start() if found else (text.find(what) if isinstance(what, str) else -1)
    return f":{text.count(chr(10), 0, offset) + 1}" if offset >= 0 else ""


def expand_includes(body: str, path: Path) -> str:
    """Replace each specdacular include line with specd's built-in file of the same kind and name."""
    problems: list[str] = []

    def inline(match: re.Match[str]) -> str:
        include, kind, name, rest = match.groups()
        folder = EQUIVALENTS.get(kind)
        candidate = builtin_dir(folder) / name if folder else None
        if candidate is None or not candidate.is_file():
            line = body.count("\n", 0, match.start()) + 1
            looked = f"looked for {candidate}" if candidate else f"specd has no built-in {kind}/"
            problems.append(f"{path}: line {line}: include @{include} has no built-in equivalent in specd "
                            f"({looked})")
            return match.group(0)
        text = candidate.read_text(encoding="utf-8")
        if folder == "workflows":  # a workflow's frontmatter is for specd; a template's is part of the template
            import frontmatter

            text = frontmatter.loads(text).content
        text = text.strip()
        note = f" {rest.strip()}" if rest.strip() else ""
        return f"<!-- @{include}{note}: specd's built-in {folder}/{name} -->\n{text}\n"

    expanded = INCLUDE.sub(inline, body)
    if problems:
        raise ConfigError("\n".join(problems),
                          fix="remove those include lines, or paste the text the workflow needs into it "
                              "(specd itself validates the task, loads its context and commits)")
    return expanded


def check_includes(path: Path) -> None:
    """Raise ConfigError now, at load time, for an include no step could ever expand."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return  # load_workflow reports unreadable files with its own message when the step runs
    if ".claude/specdacular/" in text:
        expand_includes(text, path)
