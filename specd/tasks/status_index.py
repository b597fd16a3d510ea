"""Finished tasks' `specd status` rows, kept between listings so thousands of tasks list in well under a second.

A row is kept only for a task whose run ended for good (COMPLETE, CANCELLED,
FAILED) and that no process is running. It is reused while every file the row
was built from is unchanged, to the nanosecond, size and inode: ``config.json``,
the run state, ROADMAP.md, the phase folders (a phase added or removed changes
them) and the lock's owner file (every new run rewrites it).
Any difference, or another specd version, and the row is built afresh from the
files. A row built from a file changed in the last moment is not kept yet: file
times advance in clock ticks, so an edit in the same tick could go unseen.
The index lives in ``.specd/.cache/`` (git-ignored) and is rewritten only when
a row changed; a broken or unwritable one just means building every row.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Collection
from typing import Any

from specd import __version__
from specd.state import atomic
from specd.tasks.phases import PHASE_FOLDERS
from specd.tasks.project import Project

INDEX = "status-rows.json"
RACY_NS = 100_000_000  # 0.1 s: far more than a file-time tick
FINAL = frozenset({"COMPLETE", "CANCELLED", "FAILED"})
WATCHED = ("config.json", ".pipeline-state.json", "ROADMAP.md", ".run.lock.owner", *PHASE_FOLDERS)

Signature = list[list[int] | None]


def signature(folder: str) -> Signature:
    # Looked up relative to the open folder: each stat then resolves one name, not the whole path again.
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return [None] * len(WATCHED)
    marks: Signature = []
    try:
        for name in WATCHED:
            try:
                st = os.stat(name, dir_fd=fd)  # noqa: PTH116 - os.stat for dir_fd (60,000 calls at 10,000 tasks)
            except OSError:
                marks.append(None)
            else:
                marks.append([st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode])
    finally:
        os.close(fd)
    return marks


def task_folders(project: Project) -> dict[str, list[tuple[str, Signature]]]:
    """Each task name, with the folders holding it (two: the same name in tasks/ and features/) and their
    signatures. A task is a folder with a config.json file, as everywhere else."""
    found: dict[str, list[tuple[str, Signature]]] = {}
    for root in (project.tasks_dir, project.features_dir):
        try:
            entries = os.scandir(root)
        except OSError:
            continue
        with entries:
            for entry in entries:
                marks = signature(entry.path) if entry.is_dir() else [None]
                if marks[0] is not None and stat.S_ISREG(marks[0][3]):
                    found.setdefault(entry.name, []).append((entry.path, marks))
    return found


def listing(project: Project, build: Callable[[str, tuple[str, Signature] | None], dict[str, Any]],
            always: Collection[str] = ()) -> list[dict[str, Any]]:
    """Every task's row in name order: from the index where still valid, otherwise from ``build(task)``.
    Tasks in ``always`` (running in a worktree, whose files the signatures do not watch) are always built.
    ``build`` gets the task's one folder and its signature (None when the name is in both places), so it need
    not look again."""
    path = project.specd_dir / ".cache" / INDEX
    kept = _load(path)
    fresh: dict[str, Any] = {}
    changed = False  # a row built afresh or one dropped: the index is written once, at the end
    rows = []
    settled = time.time_ns() - RACY_NS  # taken before any row is built
    for name, folders in sorted(task_folders(project).items()):
        # A name in both places is never taken from the index: building its row reports the clash.
        folder, marks = folders[0] if len(folders) == 1 and name not in always else (None, None)
        entry = kept.get(folder) if folder else None
        if folder and entry is not None and entry.get("sig") == marks and isinstance(entry.get("row"), dict):
            row = entry["row"]
            fresh[folder] = entry
        else:
            row = build(name, folders[0] if len(folders) == 1 else None)
            if folder and marks and row.get("status") in FINAL and not row.get("running") and all(
                    mark is None or mark[0] < settled for mark in marks):
                fresh[folder] = {"sig": marks, "row": row}
                changed = True
        rows.append(row)
    if (changed or len(fresh) != len(kept)) and project.specd_dir.is_dir():
        with contextlib.suppress(OSError, TypeError, ValueError):  # read-only checkout: build rows every time
            atomic.write_text(path, json.dumps({"version": __version__, "rows": fresh}, separators=(",", ":"),
                                               default=str), durable=False)  # a cache: no fsync
    return rows


def _load(path: Any) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != __version__ or not isinstance(data.get("rows"), dict):
        return {}
    return {k: v for k, v in data["rows"].items() if isinstance(v, dict)}
