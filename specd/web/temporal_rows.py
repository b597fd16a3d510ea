"""The page's view of tasks that live on Temporal (submitted from this clone): never this clone's copy (which
`specd new` left NOT_STARTED, and which no answer here should touch).

- Their rows are as `specd status` shows them: what their workers pushed, corrected by their workflows.
- A task's own pages read the pushed copy of its ``.specd/`` (``pushed_copy``), unpacked under
  ``.specd/.cache/temporal/<task>/``: its steps, transcripts, documents and events as the workers committed them.

Asking Temporal and fetching a pushed branch takes a tenth of a second or more a task, and the page asks on every
change, so both are kept and asked again in the background once ``FRESH`` seconds old; only the first look waits.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from specd.errors import SpecdError
from specd.tasks.project import Project

FRESH = 5.0  # seconds the rows are shown as they were asked, before they are asked again (in the background)
_kept: dict[Path, tuple[float, list[dict[str, Any]]]] = {}
_asking: set[Path | tuple[Path, str]] = set()  # what is being asked again now: a project's rows, a task's copy
_copied: dict[tuple[Path, str], float] = {}  # when each task's pushed copy was last fetched
_lock = threading.Lock()


def on_temporal(project: Project) -> list[str]:
    """The tasks this clone submitted to Temporal that still live there (not moved here since)."""
    from specd.executors.temporal import record

    return sorted(task for task in record.load(project) if record.on_temporal(project, task))


def temporal_rows(project: Project) -> list[dict[str, Any]]:
    names = on_temporal(project)
    if not names:
        return []
    kept = _kept.get(project.root)
    if kept is None or {row["task"] for row in kept[1]} != set(names):
        _ask(project, names)  # the first look (or a task submitted since): waited for
    else:
        _refresh(project, names)
    return [dict(row) for row in _kept.get(project.root, (0.0, []))[1]]


def mark(project: Project) -> tuple[tuple[str, str, str], ...]:
    """What the tasks page's change mark takes of the rows (task, status, next step), as kept: never waits for
    Temporal, but has the rows asked again once they are old, so a step done on a worker reaches an open page."""
    names = on_temporal(project)
    if not names:
        return ()
    _refresh(project, names)
    rows = _kept.get(project.root, (0.0, []))[1]
    return tuple((str(r["task"]), str(r.get("status")), str((r.get("next") or {}).get("step"))) for r in rows)


def _refresh(project: Project, names: list[str]) -> None:
    """Ask again in the background when the rows are older than ``FRESH`` (or missing), once at a time."""
    kept = _kept.get(project.root)
    if kept is not None and time.monotonic() - kept[0] <= FRESH:
        return
    with _lock:
        if project.root in _asking:
            return
        _asking.add(project.root)
    threading.Thread(target=_ask, args=(project, names), daemon=True, name="specd-temporal-rows").start()


def _ask(project: Project, names: list[str]) -> None:
    from specd.commands.temporal import listing_on_temporal
    from specd.tasks.status import task_status

    try:
        rows = [task_status(project, name) for name in names]
        unreached = ""
        try:
            listing_on_temporal(project, rows, lambda where, name: task_status(where, name), {})
        except (SpecdError, OSError) as exc:
            unreached = str(exc)
        for row in rows:
            row["source"] = "temporal"
            if "temporal" not in row:  # Temporal did not answer for it: this clone's copy, and the page says so
                row["reason"] = (f"runs on Temporal, which did not answer ({unreached or 'unreachable'}): this is "
                                 "this clone's copy, not what its workers pushed")
        _kept[project.root] = (time.monotonic(), rows)
        by_name = {row["task"]: row for row in rows}
        for name in names:  # each task's own page then reads a copy made here, off the server's event loop
            if (project.root, name) in _copied:
                continue
            if "temporal" in by_name[name]:
                _copied[(project.root, name)] = time.monotonic()  # the row was read from the copy, just fetched
            else:
                _unpack(project, name, _copy_path(project, name))
    finally:
        with _lock:
            _asking.discard(project.root)


def pushed_copy(project: Project, task: str) -> Project | None:
    """The pushed copy of a task on Temporal, as a project whose ``.specd/`` the page reads; None for any other
    task (and for one whose branch the remote does not have yet)."""
    if task not in on_temporal(project):
        return None
    into, key = _copy_path(project, task), (project.root, task)
    if key not in _copied or not into.is_dir():
        _unpack(project, task, into)  # the first look: waited for
    elif time.monotonic() - _copied[key] > FRESH:
        with _lock:
            if key in _asking:
                return Project(into)
            _asking.add(key)
        threading.Thread(target=_unpack, args=(project, task, into), daemon=True, name="specd-temporal-copy").start()
    return Project(into) if into.is_dir() else None


def _copy_path(project: Project, task: str) -> Path:
    from specd.executors.temporal.pushed import copy_path

    return copy_path(project, task)


def _unpack(project: Project, task: str, into: Path) -> None:
    from filelock import FileLock

    from specd.executors.temporal import pushed
    from specd.executors.temporal.signals import settings_from

    key = (project.root, task)
    try:
        settings = settings_from(project, {}, task)
        if settings is not None:
            into.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(into) + ".lock"):  # `specd status` unpacks the same copy
                pushed.unpack(project, settings.remote, task, into)
    except (SpecdError, OSError):
        pass  # the page shows the copy it has, or this clone's; `specd status TASK` says what went wrong
    finally:
        _copied[key] = time.monotonic()
        with _lock:
            _asking.discard(key)
