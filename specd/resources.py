"""Where the built-in pipelines, workflows, hooks, schemas and templates live.

A wheel carries them in ``specd/_builtin/<kind>`` (see pyproject's
force-include); an editable install or a source checkout has them at the
repository root, beside the package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
KINDS = ("pipelines", "workflows", "hooks", "schemas", "templates")


@cache
def builtin_dir(kind: str) -> Path:
    if kind not in KINDS:
        raise ValueError(f"unknown resource kind {kind!r}")
    for candidate in (_PACKAGE / "_builtin" / kind, _PACKAGE.parent / kind):
        if candidate.is_dir():
            return candidate
    # Reaching this means a broken install; say so plainly rather than fail later.
    raise FileNotFoundError(
        f"specd's built-in {kind}/ folder is missing (looked in {_PACKAGE / '_builtin' / kind} "
        f"and {_PACKAGE.parent / kind}); reinstall specd"
    )


def builtin(kind: str, name: str) -> Path:
    return builtin_dir(kind) / name
