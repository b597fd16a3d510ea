"""The read model's one store: a SQLite database, ``.specd/.cache/index.db`` (git-ignored).

Three tables, each only a cache of what the task folders say (the files stay the truth):
- ``rows``: a row per task folder, with the folder's signature (``signature``: two integers), the fields a table
  shows and, once a ``--json`` listing or the page has built it, the whole row, both as JSON text; ``planned``
  marks an unfinished task's row, whose plan also depends on the shared inputs (``meta``'s ``shared``);
- ``answers``: what `specd status TASK` printed, a row per task: the warnings' lines and each form in a column of
  its own (the piped text, the JSON, what a terminal was drawn), so that a lookup reads only the one it prints;
- ``printed``: the same for the listing (one row).
An answer and the printed listing are kept with the marks they were worked out from (``inputs``).

Why SQLite rather than JSON files: a listing that finds one task changed writes one row in one transaction
instead of rewriting megabytes, and a write cut short (``kill -9``, a full disk) leaves the database as it was
before or as it is after, never half of it; WAL lets a listing read while another one writes. ``PRAGMA
user_version`` is the schema's version; ``meta`` holds the rows' version (specd's and Python's, see
``rows.VERSION``). A file that is not a database, or one of another schema, is deleted and made again from the
folders; a database that is busy or cannot be written is simply not written: the next call builds again. The
file is its owner's only (mode 0600, and SQLite gives its -wal and -shm files the same): answers and rows are
kept with a digest that covers secret values.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any

NAME = "index.db"
SCHEMA = 4  # PRAGMA user_version: a database of another schema is made again
BUSY_MS = 200  # another listing writing: wait this long, then leave the writing to a later call
TABLES = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
          "CREATE TABLE rows (folder TEXT PRIMARY KEY, digest INTEGER NOT NULL, bits INTEGER NOT NULL,"
          " shown TEXT NOT NULL, whole TEXT, planned INTEGER NOT NULL)",
          "CREATE TABLE answers (task TEXT PRIMARY KEY, head TEXT NOT NULL, err TEXT NOT NULL, out TEXT NOT NULL,"
          " json TEXT, drawn TEXT)",
          "CREATE TABLE printed (id INTEGER PRIMARY KEY CHECK (id = 0), head TEXT NOT NULL, folders BLOB NOT NULL,"
          " err TEXT NOT NULL, out TEXT NOT NULL, json TEXT, drawn TEXT)")
NAMES = frozenset({"meta", "rows", "answers", "printed"})
# What the JSON files of earlier versions were: removed when a database is made.
OLD = ("status-list.json", "status-rows.json")


def _open(path: str, make: bool) -> sqlite3.Connection | None:
    """A connection to the database at ``path``; None when it cannot be opened, or (unless ``make``) is missing."""
    if not make and not os.path.exists(path):  # noqa: PTH110 - no pathlib on the read path
        return None
    try:
        return sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    except (sqlite3.Error, OSError):
        return None


class Stale(Exception):
    """The file is a database of another schema."""


def connect(cache: str, make: bool = True) -> sqlite3.Connection | None:
    """The database in the folder ``cache``, made when missing (unless not ``make``); None when it cannot be
    opened. A corrupt file, or one of another schema, is deleted and made afresh: nothing in it is worth keeping
    over the folders."""
    path = f"{cache}/{NAME}"
    for _ in range(2):
        db = _open(path, make)
        if db is None:
            return None
        try:
            _private(path)
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                if not make:
                    db.close()
                    return None
                _make(db, cache)
            elif {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} != NAMES:
                raise Stale  # the right version, but its tables torn away: made again
            db.execute("PRAGMA synchronous=NORMAL")  # a cache: atomic on a crash, no fsync per write
            return db
        except sqlite3.OperationalError:
            db.close()
            return None  # busy (another call writes), read-only: worked out from the folders this time
        except (sqlite3.DatabaseError, Stale):
            db.close()  # not a database (a torn copy, junk) or another schema: gone, and made again
        remove(cache)
    return None


def _private(path: str) -> None:
    """The database is for its owner's eyes only; its -wal and -shm files take its mode when SQLite makes them."""
    with contextlib.suppress(OSError):
        if os.stat(path).st_mode & 0o077:  # noqa: PTH116
            os.chmod(path, 0o600)  # noqa: PTH101


def _make(db: sqlite3.Connection, cache: str) -> None:
    """Make the tables in a new (empty) database; raise Stale for a database of another schema. Looked at
    again under the write lock: another call may have made them since."""
    db.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer; kept in the file
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] != 0:
                raise Stale
            for table in TABLES:
                db.execute(table)
            db.execute(f"PRAGMA user_version={SCHEMA}")
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    import shutil

    shutil.rmtree(f"{cache}/status", ignore_errors=True)  # the answers' JSON files of earlier versions
    for name in OLD:
        with contextlib.suppress(OSError):
            os.unlink(f"{cache}/{name}")  # noqa: PTH108


def remove(cache: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(f"{cache}/{NAME}{suffix}")  # noqa: PTH108


def meta(db: sqlite3.Connection, key: str) -> str | None:
    found = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if found is None else str(found[0])


def write(db: sqlite3.Connection, statements: list[tuple[str, Any]]) -> bool:
    """Run ``statements`` (SQL, and its parameters: a tuple, or a list of tuples for many rows) in one
    transaction. False when the database could not be written (busy, read-only, full): a later call writes."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql, params in statements:
                if isinstance(params, list):
                    db.executemany(sql, params)
                else:
                    db.execute(sql, params)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # sqlite may have rolled back already
                db.execute("ROLLBACK")
            raise
    except (sqlite3.Error, OverflowError):
        return False
    return True


def read_one(cache: str, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """One row of a query, for a lookup on the fast path: None when there is no database (none is made), it is
    busy, damaged or of another schema, or it holds no such row. The schema is not looked at first: a query
    of another schema fails, and what it finds is checked by the caller anyway."""
    db = _open(f"{cache}/{NAME}", make=False)
    if db is None:
        return None
    try:
        found = db.execute(sql, params).fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return None if found is None else tuple(found)
