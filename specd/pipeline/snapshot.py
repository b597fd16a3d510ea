"""The last pipeline a run loaded, kept by digest, so answering a run survives a broken pipeline file.

`cancel`, `approve`, `reject` and `skip` must work while the user is halfway through editing the
pipeline file. `reject` and `skip` move the run's cursor, which needs the pipeline's steps: they use
the copy of the pipeline the run last loaded (its digest is in the run state), and say so. The copy is
written once per distinct pipeline, in `.specd/.cache/` (git-ignored), and checked against its digest
when read, so a damaged copy is never used.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from specd.state import atomic
from specd.system.digest import sha256
from specd.tasks.project import Project


def canonical(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def digest_of(text: str) -> str:
    return sha256(text.encode()).hexdigest()[:16]


def _path(project: Project, digest: str) -> Path:
    return project.specd_dir / ".cache" / f"pipeline-{digest}.json"


def keep(project: Project, text: str, digest: str) -> None:
    path = _path(project, digest)
    with contextlib.suppress(OSError):
        if path.stat().st_size == len(text.encode()):
            return  # kept already, and whole: a copy a power cut cut short is written again (one stat per load)
    if not project.specd_dir.is_dir():
        return
    with contextlib.suppress(OSError):  # a read-only checkout keeps no copy; answers then need a good file
        atomic.write_text(path, text, durable=False)  # a copy a power cut damaged fails its digest: not used


def last_loaded(project: Project, digest: str | None) -> dict[str, Any] | None:
    """The pipeline data the run with ``digest`` loaded, or None when no intact copy is kept."""
    if not digest or not digest.isalnum():
        return None
    try:
        text = _path(project, digest).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if digest_of(text) != digest:
        return None
    with contextlib.suppress(ValueError):
        data = json.loads(text)
        return data if isinstance(data, dict) and isinstance(data.get("pipelines"), dict) else None
    return None
