"""Every task's `specd status` row, kept between listings so thousands of tasks list in well under a second.

A row is kept for a task no process is running (the lock's owner file would change its signature, and a row
showing a live run is never kept), and reused while its folder's signature (``signature``) is unchanged:
- a finished task's (COMPLETE, CANCELLED, FAILED) under the shallow signature: the folder's own change time
  (any file made, removed or renamed in it moves it, an atomic save included) and those of the watched files
  that exist (a file edited in place moves only its own);
- an unfinished task's, with the plan it shows, under the deep signature (its whole tree) and while the shared
  inputs a plan is worked out from (pipeline files, config.json, workflows/, hooks/, the built-ins: ``inputs``)
  are as they were when it was written (``meta``'s ``shared``): planning a task (the pipeline loaded, the run
  state copied and its cursor replayed) was a fifth of a listing, done again for every unfinished task.
Any difference, or another specd or Python version, and the row is built afresh from the files. A row built
from a file changed in the last moment is not kept yet: file times advance in clock ticks, so an edit in the
same tick could go unseen.

The rows live in the read model's store (``kept``): the few fields a table shows (all a plain or terminal
listing reads and writes) and the whole row (read and written by ``--json`` and the page). Only the rows that
changed are written, in one transaction; a broken or unwritable store just means building rows.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from specd.system import fanout
from specd.tasks.project import Project, in_order
from specd.tasks.readmodel import inputs, kept, store
from specd.tasks.readmodel.signature import DEEP, deep, marks, names, task_folders

RACY_NS = 100_000_000  # 0.1 s: far more than a file-time tick
FINAL = frozenset({"COMPLETE", "CANCELLED", "FAILED"})
# With the cost: all a table or the graph reads (a branch: the task runs in its worktree).
SHOWN = ("task", "status", "needs", "next", "updated_at", "branch", "idle")

# The task's name, and its one folder, the watched files in it and whether the folder is a link.
Found = tuple[str, frozenset[str], bool] | None
# What building a row gives: the row, and the folder's deep signature and newest change time when it is an
# unfinished task's row (taken before the row was built), else None.
Built = tuple[dict[str, Any], tuple[list[int], int] | None]
Build = Callable[[str, Found], Built]


def light(row: dict[str, Any]) -> dict[str, Any]:
    """The fields a table shows, as the same dict shape (the cost inside ``usage``)."""
    usage = row.get("usage")
    cost = usage.get("cost_usd") if isinstance(usage, dict) else None
    broken = {"reason": row["reason"]} if row.get("status") == "ERROR" and "reason" in row else {}  # said beside
    return {**{k: row[k] for k in SHOWN if k in row}, **({"usage": {"cost_usd": cost}} if cost is not None else {}),
            **broken}


def listing(project: Project, build: Build, away: Mapping[str, tuple[str, str]] | None = None, *, full: bool = True,
            keep: list[Any] | None = None, shared: tuple[str, int] | None = None) -> list[dict[str, Any]]:
    """Every task's row in name order: from the store where still valid, otherwise from ``build(task, found)``
    (``found``: the task's one folder and the watched files in it, or None when the name is in both places).
    A task in ``away`` lives elsewhere (a worktree): its row is read from the folder named there (the first of
    the pair; the second, the record saying where it lives), and kept under the signatures of that folder and its
    own and the record's marks: when unfinished, that folder's deep one, over the worktree's own pipeline,
    workflows and hooks too (``deep_there``: the plan there follows them). ``full=False`` gives only the fields a
    table shows (``light``), and reads no whole rows. ``keep`` gets, in any order, the folder and signature of each
    row the store holds (for a task in a worktree, its folder there's own), and None for each it cannot.
    ``shared``: the shared inputs' marks as text and their newest change time (``inputs.shared_marks``), or
    None when they cannot be watched: then no unfinished row is read or kept."""
    db = kept.open_store(project)
    try:
        shown, whole, texts = kept.load(db, full, shared[0] if shared else None)
    except kept.Damaged:  # nothing in it is worth keeping over the folders: made again, empty
        db.close()  # type: ignore[union-attr]  # only a database read raises it
        store.remove(str(project.specd_dir / ".cache"))
        db = kept.open_store(project)
        shown, whole, texts = {}, {} if full else None, {}
    kept_shown: dict[str, Any] = {}
    fresh: dict[str, tuple[dict[str, Any], dict[str, Any], list[int], bool]] = {}  # rows built now to keep
    rows: list[dict[str, Any] | None] = []
    settled = time.time_ns() - RACY_NS  # taken before any row is built
    found = task_folders(project, shown)
    away = away or {}
    # A task away: its folder there, and a signature over both its folders and its home record (without one, a run
    # in each copy makes its row an error), with the newest change time of all three.
    there: dict[str, tuple[str, list[int], int]] = {}
    # What a printed listing checks instead: the folder there's own (the copy here is one of the folders that are
    # no row of it, ``printed``); None for a row kept with its plan, whose inputs there no printed listing watches.
    own: dict[str, tuple[str, list[int]] | None] = {}
    parts: dict[str, tuple[list[int], list[int], int]] = {}  # its copy here's signature, its record's marks, newest
    for name, (folder, record) in away.items():
        got = marks(folder) if len(found.get(name, ())) == 1 else None
        said = inputs.mark(record) or [-1]  # none: the task placed by what is on disk (``home.infer``)
        if got is not None:
            _, here, newest, _ = found[name][0]
            parts[name] = (here, said, newest)
            was = shown.get(folder)
            planned = type(was) is list and _deep(was[0])  # kept with its plan: its deep signature there
            alone = deep(folder) if planned else None
            with_tree = deep_there(folder, alone) if alone is not None else None
            # a printed listing watches the folder there deep, and the worktree's own inputs (``printed``)
            own[name] = (folder, got[0]) if not planned else (folder, alone[0]) if alone and with_tree else None
            got = with_tree or got
            there[name] = (folder, *_both(*parts[name], got))
    todo: list[tuple[str, Found]] = []
    slots: dict[str, int] = {}
    for name in sorted(found, key=in_order):
        folders = found[name]
        # A name in both places is never taken from the store: building its row reports the clash.
        one = len(folders) == 1 and (name not in away or name in there)
        folder, sig, _, linked = folders[0]
        if name in there:
            folder, sig, _ = there[name]
        entry: Any = shown.get(folder) if one else None
        if _holds(entry, sig):
            whole_entry = whole.get(folder) if whole is not None else None
            if whole is None or _holds(whole_entry, sig):
                kept_shown[folder] = entry
                if keep is not None:
                    keep.append(own.get(name, (folder, sig)))
                rows.append((entry if whole_entry is None else whole_entry)[1])
                continue
        slots[name] = len(rows)
        rows.append(None)  # built below, thousands of them on two cores when cold
        todo.append((name, (folder, frozenset(names(sig[1])), linked) if len(folders) == 1 else None))

    def job(item: tuple[str, Found]) -> tuple[dict[str, Any], dict[str, Any], Any]:
        row, deep = build(*item)  # the whole row, what a table shows of it, and the signature to keep it under
        keep_as: Any = None
        if row.get("running") or row.get("status") == "ERROR":
            pass  # a live run changes by the second; an error row is built again to say what is wrong now
        elif row.get("status") in FINAL:
            keep_as = "shallow"
        elif shared is not None and shared[1] < settled:
            keep_as = deep
        return (row if full else {}), light(row), keep_as

    for (name, _), (row, view, keep_as) in zip(todo, fanout.fork_map(job, todo), strict=True):
        folders = found[name]
        folder, sig, newest, _ = folders[0]
        if name in there:
            folder, sig, newest = there[name]
        planned = keep_as is not None and keep_as != "shallow"
        if planned:
            sig, newest = _both(*parts[name], keep_as) if name in there else keep_as
        if len(folders) == 1 and (name not in away or name in there) and keep_as is not None and newest < settled:
            fresh[folder] = (row, view, sig, planned)
            if keep is not None:
                # (a row kept with its plan just now: its folder there was not looked at alone; the next listing)
                keep.append(None if planned and name in there else own.get(name, (folder, sig)))
        elif keep is not None:
            keep.append(None)
        rows[slots[name]] = row if full else view
    dropped = [folder for folder in shown if folder not in kept_shown and folder not in fresh]
    if db is not None:
        if fresh or dropped:
            with contextlib.suppress(sqlite3.Error):  # damaged under us: the next call makes it again
                kept.save(db, full, fresh, dropped, shared[0] if shared else None,
                      {k: (v[0], *texts[k]) for k, v in kept_shown.items()})
        db.close()
    return rows  # type: ignore[return-value]  # every None was filled above


def deep_there(folder: str, got: tuple[list[int], int] | None = None) -> tuple[list[int], int] | None:
    """The deep signature of a task's folder in its worktree (``got``, when already taken), over its tree and that
    worktree's own shared inputs (its pipeline, workflows and hooks: a plan there follows them), and their newest
    change time; None when either cannot be watched whole."""
    got = deep(folder) if got is None else got
    tree = inputs.tree_marks(Project(Path(folder).parents[2])) if got is not None else None
    if got is None or tree is None:
        return None
    return [hash((got[0][0], tree[0])), got[0][1]], max(got[1], tree[1])


def _both(here: list[int], said: list[int], newest: int, got: tuple[list[int], int]) -> tuple[list[int], int]:
    """A signature over a task's copy here (``here``), its folder there (``got``) and its home record's marks."""
    return [hash((*here, got[0][0], *said)), got[0][1]], max(newest, got[1], said[0])


def _deep(sig: Any) -> bool:
    return type(sig) is list and len(sig) == 2 and type(sig[1]) is int and bool(sig[1] & DEEP)


def _holds(entry: Any, sig: list[int]) -> bool:
    """Whether a store entry (read from a file: maybe anything) is ``[sig, row]``."""
    return type(entry) is list and len(entry) == 2 and entry[0] == sig and type(entry[1]) is dict


def remember(project: Project, folder: str, row: dict[str, Any], sig: list[int], newest: int,
             deep: tuple[list[int], int] | None, shared: tuple[str, int] | None, settled: int) -> bool:
    """Keep one task's row, built (``status.listing_row``) after ``sig`` and ``deep`` were taken, as a listing
    would have kept it: under the same rules, with ``settled`` the time no mark may have reached. False when
    it was not kept."""
    if row.get("running") or row.get("status") == "ERROR":
        return False
    planned = row.get("status") not in FINAL
    if planned:
        if deep is None or shared is None or shared[1] >= settled:
            return False
        sig, newest = deep
    if newest >= settled:
        return False
    db = kept.open_store(project)
    if db is None:
        return False
    try:
        kept.save(db, True, {folder: (row, light(row), sig, planned)}, [], shared[0] if shared else None, {})
    except sqlite3.Error:
        return False
    finally:
        db.close()
    return True
