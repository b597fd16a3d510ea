"""Finished tasks' `specd status` rows, kept between listings so thousands of tasks list in well under a second.

A row is kept only for a task whose run ended for good (COMPLETE, CANCELLED,
FAILED) and that no process is running. It is reused while its folder's
signature (``status_marks``) is unchanged: the folder's own change time (any
file made, removed or renamed in it moves it, an atomic save included) and
those of the watched files that exist (a file edited in place moves only its
own). Any difference, or another specd version, and the row is built afresh
from the files. A row built from a file changed in the last moment is not kept
yet: file times advance in clock ticks, so an edit in the same tick could go
unseen.

The rows live in one SQLite database in ``.specd/.cache/`` (git-ignored;
``index_db``), a row per task folder with its signature: the few fields a table
shows (all a plain or terminal listing reads and writes) and the whole row
(read and written by ``--json`` and the web page). Only the rows that changed
are written, in one transaction; a broken or unwritable index just means
building rows.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Collection
from typing import Any

from specd import __version__
from specd.system import fanout
from specd.tasks import index_db, status_cache
from specd.tasks.project import Project
from specd.tasks.status_marks import names, task_folders

__all__ = ["listing", "task_folders"]

OLD = ("status-list.json", "status-rows.json")  # the JSON files the database replaced: removed when it is written
# The signatures hold Python's hash of ints (status_marks); "idle": rows keep it since ANSWERED and STOPPED.
VERSION = f"{__version__} {sys.hexversion} idle"
RACY_NS = 100_000_000  # 0.1 s: far more than a file-time tick
FINAL = frozenset({"COMPLETE", "CANCELLED", "FAILED"})
# With the cost: all a table or the graph reads (a branch: the task runs in its worktree).
SHOWN = ("task", "status", "needs", "next", "updated_at", "branch", "idle")

# The task's name, and its one folder, the watched files in it and whether the folder is a link.
Build = Callable[[str, tuple[str, frozenset[str], bool] | None], dict[str, Any]]


def light(row: dict[str, Any]) -> dict[str, Any]:
    """The fields a table shows, as the same dict shape (the cost inside ``usage``)."""
    usage = row.get("usage")
    cost = usage.get("cost_usd") if isinstance(usage, dict) else None
    return {**{k: row[k] for k in SHOWN if k in row}, **({"usage": {"cost_usd": cost}} if cost is not None else {})}


def listing(project: Project, build: Build, always: Collection[str] = (), *, full: bool = True,
            keep: list[Any] | None = None) -> list[dict[str, Any]]:
    """Every task's row in name order: from the index where still valid, otherwise from ``build(task, found)``
    (``found``: the task's one folder and the watched files in it, or None when the name is in both places).
    Tasks in ``always`` (running in a worktree, whose files the signatures do not watch) are always built.
    ``full=False`` gives only the fields a table shows (``light``), and reads no whole rows. ``keep`` gets,
    in any order, the folder and signature of each row the index holds, and None for each it cannot."""
    cache = project.specd_dir / ".cache"
    db, (shown, whole, texts) = _open(project, full)
    kept_shown: dict[str, Any] = {}
    fresh: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # rows built now that may be kept, and shown
    sigs: dict[str, list[int]] = {}
    rows: list[dict[str, Any] | None] = []
    settled = time.time_ns() - RACY_NS  # taken before any row is built
    found = task_folders(project, shown)
    todo: list[tuple[str, tuple[str, frozenset[str], bool] | None]] = []
    slots: dict[str, int] = {}
    for name in sorted(found):
        folders = found[name]
        # A name in both places is never taken from the index: building its row reports the clash.
        one = len(folders) == 1 and name not in always
        folder, sig, _, linked = folders[0]
        entry: Any = shown.get(folder) if one else None
        if _holds(entry, sig):
            whole_entry = whole.get(folder) if whole is not None else None
            if whole is None or _holds(whole_entry, sig):
                kept_shown[folder] = entry
                if keep is not None:
                    keep.append((folder, sig))
                rows.append((entry if whole_entry is None else whole_entry)[1])
                continue
        slots[name] = len(rows)
        rows.append(None)  # built below, thousands of them on two cores when cold
        todo.append((name, (folder, frozenset(names(sig[1])), linked) if len(folders) == 1 else None))
    def job(item: tuple[str, tuple[str, frozenset[str], bool] | None]) -> tuple[dict[str, Any], dict[str, Any], bool]:
        row = build(*item)  # the whole row, what a table shows of it, and whether the index may keep it
        return (row if full else {}), light(row), row.get("status") in FINAL and not row.get("running")

    for (name, _), (row, view, final) in zip(todo, fanout.fork_map(job, todo), strict=True):
        folders = found[name]
        folder, sig, newest, _ = folders[0]
        if len(folders) == 1 and name not in always and final and newest < settled:
            fresh[folder], sigs[folder] = (row, view), sig
            if keep is not None:
                keep.append((folder, sig))
        elif keep is not None:
            keep.append(None)
        rows[slots[name]] = row if full else view
    dropped = [folder for folder in shown if folder not in kept_shown and folder not in fresh]
    if db is not None:
        if fresh or dropped:
            _save(db, cache, full, fresh, sigs, dropped, {k: (v[0], *texts[k]) for k, v in kept_shown.items()})
        db.close()
    return rows  # type: ignore[return-value]  # every None was filled above


def _open(project: Project, full: bool) -> tuple[Any, index_db.Loaded]:
    """The index and what it holds; none for a project with no .specd/ folder (nothing is made there)."""
    if not project.specd_dir.is_dir():
        return None, ({}, {} if full else None, {})
    from specd.state import atomic

    try:
        atomic.make_folder(project.specd_dir / ".cache")
    except OSError:
        return None, ({}, {} if full else None, {})
    return index_db.read(project.specd_dir / ".cache", VERSION, full)


def _holds(entry: Any, sig: list[int]) -> bool:
    """Whether an index entry (read from a file: maybe anything) is ``[sig, row]``."""
    return type(entry) is list and len(entry) == 2 and entry[0] == sig and type(entry[1]) is dict


def _save(db: Any, cache: Any, full: bool, fresh: dict[str, tuple[dict[str, Any], dict[str, Any]]],
          sigs: dict[str, list[int]], dropped: list[str], kept: dict[str, tuple[list[int], str, str | None]],
          ) -> None:
    """Write the rows built now (the whole rows too when this listing built them; a table listing leaves
    them to the next `--json`) and forget the rows that no longer hold. Rows are redacted as they are
    written: a secret in a run state saved before the secret was known must not reach the index; a kept row
    holding a secret learned since it was written is written again, redacted."""
    entries = []
    for folder, (row, view) in fresh.items():
        shown, whole = _clean(view), _clean(row) if full else None
        if shown is None or (full and whole is None):
            dropped.append(folder)  # redaction would still change it: not kept, built again next time
        else:
            entries.append((folder, sigs[folder], shown, whole))
    rewritten = []
    if kept and status_cache.has_secret("".join(a + (b or "") for _, a, b in kept.values())):
        import json

        for folder, (sig, shown_text, whole_text) in kept.items():
            if status_cache.has_secret(shown_text + (whole_text or "")):
                shown = _clean(json.loads(shown_text))
                whole = None if whole_text is None else _clean(json.loads(whole_text))
                if shown is None or (whole_text is not None and whole is None):
                    dropped.append(folder)
                else:
                    rewritten.append((folder, sig, shown, whole))
    if index_db.save(db, VERSION, dropped, entries, rewritten):
        for name in OLD:
            with contextlib.suppress(OSError):
                (cache / name).unlink(missing_ok=True)


def _clean(row: dict[str, Any]) -> str | None:
    """The row's JSON text as the index keeps it, redacted; None when redaction of the text would still change
    it (the index keeps nothing a redacted write would mask)."""
    text = index_db.text(row)
    if not status_cache.suspect(text):
        return text
    from specd.redact import redact, redact_obj

    text = index_db.text(redact_obj(row))
    return text if redact(text) == text else None
