"""The listing's index on disk: one SQLite database, ``.specd/.cache/index.db``, a row per task folder.

Each row holds the folder's signature (``status_marks``: two integers), the fields a table shows and, once a
``--json`` listing or the page has built it, the whole row, both as JSON text. The database is only a cache:
the task folders stay the truth, and a row is used only while its signature still holds.

Why SQLite rather than the two JSON files it replaces: a listing that finds one task changed writes one row
in one transaction instead of rewriting megabytes, and a write cut short (``kill -9``, a full disk) leaves the
row as it was before or as it is after, never half of it; WAL lets a listing read while another one writes.
``PRAGMA user_version`` is the schema's version; the ``meta`` table holds the signatures' version (specd's
and Python's, see ``status_index.VERSION``). A file that is not a database, or one of another schema, is
deleted and built again from the folders; a database that is busy or cannot be written is simply not
written: the next listing builds those rows again.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

NAME = "index.db"
SCHEMA = 1  # PRAGMA user_version: a database of another schema is built again
BUSY_MS = 200  # another listing writing: wait this long, then leave the writing to a later listing
TABLES = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
          "CREATE TABLE rows (folder TEXT PRIMARY KEY, digest INTEGER NOT NULL, bits INTEGER NOT NULL,"
          " shown TEXT NOT NULL, whole TEXT)")
# A row, as written: folder, signature, the shown fields' JSON text, the whole row's JSON text or None.
Entry = tuple[str, list[int], str, str | None]


def connect(cache: Path) -> sqlite3.Connection | None:
    """The index in ``cache``, made when missing; None when it cannot be opened. A corrupt file, or one of
    another schema, is deleted and made afresh: nothing in it is worth keeping over the folders."""
    for _ in range(2):
        try:
            db = sqlite3.connect(cache / NAME, timeout=BUSY_MS / 1000, isolation_level=None)
        except (sqlite3.Error, OSError):
            return None
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                _make(db)
            db.execute("PRAGMA synchronous=NORMAL")  # a cache: atomic on a crash, no fsync per write
            return db
        except sqlite3.OperationalError:
            db.close()
            return None  # busy (another listing writes), read-only: built from the folders this time
        except (sqlite3.DatabaseError, Stale):
            db.close()  # not a database (a torn copy, junk) or another schema: gone, and made again
        remove(cache)
    return None


def _make(db: sqlite3.Connection) -> None:
    """Make the tables in a new (empty) database; raise Stale for a database of another schema. Looked at
    again under the write lock: another listing may have made them since."""
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


class Stale(Exception):
    """The file is a database of another schema."""


def remove(cache: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            (cache / f"{NAME}{suffix}").unlink(missing_ok=True)


Loaded = tuple[dict[str, Any], dict[str, Any] | None, dict[str, tuple[str, str | None]]]


def read(cache: Path, version: str, full: bool) -> tuple[sqlite3.Connection | None, Loaded]:
    """The index, opened (None when it cannot be), and what it holds (``load``). A database found damaged
    while it is read is deleted and made afresh, empty."""
    db = connect(cache)
    if db is None:
        return None, _empty(full)
    try:
        return db, load(db, version, full)
    except sqlite3.OperationalError:
        return db, _empty(full)  # busy or unreadable now: the rows are built, and written if it lets us
    except sqlite3.DatabaseError:
        db.close()
        remove(cache)
        return connect(cache), _empty(full)


def _empty(full: bool) -> Loaded:
    return {}, ({} if full else None), {}


def load(db: sqlite3.Connection, version: str, full: bool) -> Loaded:
    """``({folder: [signature, shown]}, {folder: [signature, whole]} or None unless ``full``, and each row's
    JSON texts)``; all empty when the index holds rows of another version. Raises sqlite3.DatabaseError for a
    damaged database."""
    if db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() != (version,):
        return _empty(full)
    found = db.execute(f"SELECT folder, digest, bits, shown, {'whole' if full else 'NULL'} FROM rows").fetchall()
    try:
        # One call of the C decoder for all the rows: thousands of small calls cost several times as much.
        shown = json.loads("[" + ",".join(r[3] for r in found) + "]")
        whole = json.loads("[" + ",".join(r[4] or "null" for r in found) + "]") if full else None
    except (ValueError, RecursionError, TypeError):
        raise sqlite3.DatabaseError("a row of the index is not JSON") from None  # damaged: made afresh
    index = {r[0]: [[r[1], r[2]], row] for r, row in zip(found, shown, strict=True)}
    rows = None if whole is None else {r[0]: [[r[1], r[2]], row] for r, row in zip(found, whole, strict=True)
                                      if row is not None}
    return index, rows, {r[0]: (r[3], r[4]) for r in found}


def save(db: sqlite3.Connection, version: str, dropped: Iterable[str], fresh: Iterable[Entry],
         rewritten: Iterable[Entry] = ()) -> bool:
    """In one transaction: forget the ``dropped`` folders' rows and write the ``fresh`` and ``rewritten`` ones
    (a row of another version is forgotten first). False when the index could not be written (busy,
    read-only, full): the rows are built again by a later listing."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() != (version,):
                db.execute("DELETE FROM rows")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))
            db.executemany("DELETE FROM rows WHERE folder = ?", ((folder,) for folder in dropped))
            db.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?)",
                           ((folder, sig[0], sig[1], shown, whole) for folder, sig, shown, whole in
                            [*fresh, *rewritten]))
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # sqlite may have rolled back already
                db.execute("ROLLBACK")
            raise
    except (sqlite3.Error, OverflowError):
        return False
    return True


def text(row: Any) -> str:
    """A row's JSON text as the index keeps it (what ``status_cache.suspect`` looks at)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str)
