"""What the listing's SQLite index holds, read with the standard library's sqlite3 as any tool would."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from specd.tasks.project import Project
from specd.tasks.status import all_status

INDEX = "index.db"


def indexed(specd_dir: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each task folder's kept row: (the shown fields, the whole row or None), by folder path."""
    with sqlite3.connect(specd_dir / ".cache" / INDEX) as db:
        found = db.execute("SELECT folder, shown, whole FROM rows").fetchall()
    return {folder: (json.loads(shown), None if whole is None else json.loads(whole)) for folder, shown, whole in found}


def raw_text(specd_dir: Path) -> str:
    """Every byte of the index's files (the database and its write-ahead log) as text: what a leak check reads."""
    cache = specd_dir / ".cache"
    return "".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(cache.glob(INDEX + "*")))


def listed(project: Project, cold: bool = False) -> dict[str, dict[str, Any]]:
    """The listing in this process, by task (``cold``: worked out from the files alone, the store set aside)."""
    if not cold:
        return {row["task"]: row for row in all_status(project)}
    cache, aside = project.specd_dir / ".cache", project.specd_dir / ".cache-aside"
    cache.rename(aside)
    try:
        return {row["task"]: row for row in all_status(project)}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        aside.rename(cache)
