"""The listing's rows in the read model's store (``store``, table ``rows``): read all at once, written a changed row
at a time.

A listing reads every row in one query and decodes them with one call of the C decoder (thousands of small calls
cost several times as much), and writes only the rows it built or that must go, in one transaction. Unfinished
rows (``planned``) are read only while the shared inputs' marks are those kept in ``meta``'s ``shared``, and
written only under them, checked inside the transaction: another listing may have found them changed since this
one looked. Rows are redacted as they are written: a secret in a run state saved before the secret was known
must not reach the store, and a row redaction would still change is not kept. A store whose rows cannot be read
(not JSON, torn) is made again.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any

from specd import __version__
from specd.tasks.project import Project
from specd.tasks.readmodel import redaction, store

# The signatures hold Python's hash of ints (``signature``); "plan": unfinished rows are kept too.
VERSION = f"{__version__} {sys.hexversion} plan"
# By folder: [signature, the shown fields]; [signature, the whole row] (with ``full``); the JSON texts and flag.
Loaded = tuple[dict[str, Any], dict[str, Any] | None, dict[str, tuple[str, str | None, int]]]


def open_store(project: Project) -> sqlite3.Connection | None:
    """The store; none for a project with no .specd/ folder (nothing is made there)."""
    if not project.specd_dir.is_dir():
        return None
    from specd.state import atomic

    try:
        atomic.make_folder(project.specd_dir / ".cache")
    except OSError:
        return None
    return store.connect(str(project.specd_dir / ".cache"))


def load(db: sqlite3.Connection | None, full: bool, shared: str | None) -> Loaded:
    """``({folder: [signature, shown]}, {folder: [signature, whole]} or None unless ``full``, and each row's
    JSON texts and whether it is planned)``; empty when the store holds rows of another version. Unfinished
    rows are left out unless the shared inputs are as they were when they were written."""
    empty: Loaded = ({}, {} if full else None, {})
    if db is None:
        return empty
    try:
        if store.meta(db, "version") != VERSION:
            return empty
        plans = shared is not None and store.meta(db, "shared") == shared
        found = db.execute(f"SELECT folder, digest, bits, shown, {'whole' if full else 'NULL'}, planned FROM rows"
                           + ("" if plans else " WHERE planned = 0")).fetchall()
        # One call of the C decoder for all the rows: thousands of small calls cost several times as much.
        shown = json.loads("[" + ",".join(r[3] for r in found) + "]")
        whole = json.loads("[" + ",".join(r[4] or "null" for r in found) + "]") if full else None
    except sqlite3.OperationalError:
        return empty  # busy: the rows are built, and written if the store lets us
    except (sqlite3.DatabaseError, ValueError, RecursionError, TypeError):
        raise Damaged from None
    index = {r[0]: [[r[1], r[2]], row] for r, row in zip(found, shown, strict=True)}
    rows = None if whole is None else {r[0]: [[r[1], r[2]], row] for r, row in zip(found, whole, strict=True)
                                      if row is not None}
    return index, rows, {r[0]: (r[3], r[4], r[5]) for r in found}


class Damaged(Exception):
    """The store could be opened, but what it holds cannot be read."""


def save(db: sqlite3.Connection, full: bool, fresh: dict[str, tuple[dict[str, Any], dict[str, Any], list[int], bool]],
          dropped: list[str], shared: str | None, kept: dict[str, tuple[list[int], str, str | None, int]]) -> None:
    """Write the rows built now (the whole rows too when this listing built them; a table listing leaves
    them to the next `--json`) and forget the rows that no longer hold. Rows are redacted as they are
    written: a secret in a run state saved before the secret was known must not reach the store; a kept row
    holding a secret learned since it was written is written again, redacted."""
    entries = []
    # The rows' texts looked at in one pass: only when a trace of something redaction masks shows in them all
    # (``redaction.suspect``: any row's trace shows in the whole) is each row looked at on its own.
    texts = {folder: (redaction.text(view), redaction.text(row) if full else None)
             for folder, (row, view, _, _) in fresh.items()}
    if not redaction.suspect("\n".join(a + (b or "") for a, b in texts.values())):
        entries = [(folder, sig[0], sig[1], *texts[folder], int(plan)) for folder, (_, _, sig, plan) in fresh.items()]
        fresh = {}
    for folder, (row, view, sig, plan) in fresh.items():
        shown, whole = _clean(view), _clean(row) if full else None
        if shown is None or (full and whole is None):
            dropped.append(folder)  # redaction would still change it: not kept, built again next time
        else:
            entries.append((folder, sig[0], sig[1], shown, whole, int(plan)))
    if kept and redaction.has_secret("".join(a + (b or "") for _, a, b, _ in kept.values())):
        for folder, (sig, shown_text, whole_text, planned) in kept.items():
            if redaction.has_secret(shown_text + (whole_text or "")):
                shown = _clean(json.loads(shown_text))
                whole = None if whole_text is None else _clean(json.loads(whole_text))
                if shown is None or (whole_text is not None and whole is None):
                    dropped.append(folder)
                else:
                    entries.append((folder, sig[0], sig[1], shown, whole, planned))
    statements: list[tuple[str, Any]] = []
    if store.meta(db, "version") != VERSION:
        statements += [("DELETE FROM rows", ()), ("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))]
    if shared is not None and any(e[5] for e in entries) and store.meta(db, "shared") != shared:
        # the plans kept were worked out from other shared inputs: none of them holds any more
        statements += [("DELETE FROM rows WHERE planned = 1", ()),
                       ("INSERT OR REPLACE INTO meta VALUES ('shared', ?)", (shared,))]
    # A plan is written only under the shared inputs it was worked out from, checked inside the transaction:
    # another listing may have found them changed since this one looked.
    statements += [("DELETE FROM rows WHERE folder = ?", [(folder,) for folder in dropped]),
                   ("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?)", [e for e in entries if not e[5]]),
                   ("INSERT OR REPLACE INTO rows SELECT ?, ?, ?, ?, ?, ? WHERE"
                    " (SELECT value FROM meta WHERE key = 'shared') = ?", [(*e, shared) for e in entries if e[5]])]
    store.write(db, statements)


def _clean(row: dict[str, Any]) -> str | None:
    """The row's JSON text as the store keeps it, redacted; None when redaction of the text would still change
    it (the store keeps nothing a redacted write would mask)."""
    text = redaction.text(row)
    if not redaction.suspect(text):
        return text
    from specd.redact import redact, redact_obj

    text = redaction.text(redact_obj(row))
    return text if redact(text) == text else None
