"""The schema pass's result, kept per exact file content, so a read-only command skips jsonschema.

The key covers the pipeline file's path and bytes, the schema's bytes and specd's
version: any change to one of them is a miss, and a miss runs the real pass. The
entry holds the pass's warnings, so a hit says exactly what the pass would say.
Entries live in ``.specd/.cache/`` (git-ignored); a broken or missing one is a miss.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from specd import __version__
from specd.resources import builtin
from specd.state import atomic
from specd.system.digest import sha256
from specd.tasks.project import Project

# Bumped when what the pass decides changes within one version: 2 = unknown keys are errors, not warnings,
# so an entry that let a file with an unknown key pass is never reused.
PASS_RULES = b"2"


def key(path: Path, raw: bytes) -> str:
    digest = sha256()
    for part in (__version__.encode(), PASS_RULES, str(path).encode(), raw,
                 builtin("schemas", "pipeline.schema.json").read_bytes()):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()[:32]


def lookup(project: Project, entry: str) -> list[str] | None:
    try:
        data = json.loads((project.specd_dir / ".cache" / f"schema-{entry}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    warnings = data.get("warnings") if isinstance(data, dict) else None
    return warnings if isinstance(warnings, list) and all(isinstance(w, str) for w in warnings) else None


def remember(project: Project, entry: str, warnings: list[str]) -> None:
    if not project.specd_dir.is_dir():
        return  # no project folder to keep it in (the built-in pipeline in a bare folder)
    with contextlib.suppress(OSError):  # a read-only checkout validates every time; that is all
        # Not durable (no fsync): an entry a power cut left empty or torn is a miss, and each worktree of
        # `specd run` starts with an empty cache, so every task's run writes one.
        atomic.write_json(project.specd_dir / ".cache" / f"schema-{entry}.json", {"warnings": warnings},
                          durable=False)
