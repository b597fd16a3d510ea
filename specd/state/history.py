"""``.pipeline-state.history.jsonl``: the finished rows of a run, one fsynced line each.

Each line is a journal record ``{"at", "kind": "row", "n": <index>, "row": {...}}``.
Saving appends only the rows not yet written, so a step costs the same at row
2,000 as at row 10. The snapshot (``.pipeline-state.json``) says how many rows
count; lines beyond that count are the tail of a save that was killed between
the append and the snapshot, and are ignored: the step they belong to re-runs
and is recorded once. A line whose ``n`` is below the rows read so far starts a
rewrite of the tail from there (the re-run's row replacing the ignored one).

The file holds at most ``SEGMENT`` rows: once full, it is renamed to
``.pipeline-state.history/<first row>.jsonl`` (sealed, never written again) and
a new one begins. A step's commit so re-adds a bounded file, not the run's whole
history. Every ``FANOUT`` sealed files of one size are joined into one, so 2,000
rows lie in three files, not eighty (each is stat'ed by every machinery check).
Rows are read from the sealed files in order, then this one; the same rules hold
across them (a row index going back restarts from there), so a kill between a
rotation's steps, or mid-rewrite, or mid-join, still reads right.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.state import atomic
from specd.state.journal import Journal, read_records, seal_tail
from specd.state.model import now

HISTORY_FILE = ".pipeline-state.history.jsonl"
SEALED_DIR = ".pipeline-state.history"
SEGMENT = 25  # rows per file: what a commit re-adds at most (a divisor of 50, so windows of steps compare alike)
FANOUT = 8  # sealed files of one size merged into one: 2,000 rows lie in 3 files, not 80


class HistoryFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.sealed = path.parent / SEALED_DIR
        self._journal = Journal(path)
        self._sealed = False
        self._first: int | None = None  # the first row index in the open file (None: not known yet)
        self._unsynced: set[Path] = set()  # files holding rows written but not yet fsynced

    def read(self, count: int, *, snapshot: Path) -> list[dict[str, Any]]:
        """The first ``count`` rows; lines past them are a killed save's tail and do not count."""
        rows: list[dict[str, Any]] = []
        for path, lineno, record in self._records():
            n, row = record.get("n"), record.get("row")
            if record.get("kind") != "row" or type(n) is not int or not isinstance(row, dict):
                raise TaskError(f"{path}:{lineno}: not a history row (needs an integer 'n' and an "
                                f"object 'row')", fix=_fix(snapshot, self.path))
            if n > len(rows):
                if n >= count:
                    break  # a gap past the counted rows: a killed save's tail
                raise TaskError(f"{path}:{lineno}: history row {n} follows row {len(rows) - 1}; "
                                f"rows {len(rows)}..{n - 1} are missing", fix=_fix(snapshot, self.path))
            del rows[n:]
            rows.append(row)
            if path == self.path and self._first is None:
                self._first = n
        if len(rows) < count:
            raise TaskError(f"{self.path}: {snapshot.name} counts {count} finished rows but this file holds "
                            f"{len(rows)}", fix=_fix(snapshot, self.path))
        if self._first is None:
            self._first = len(rows)  # the open file is empty (or missing): its first row is the next one
        return rows[:count]

    def append(self, rows: list[dict[str, Any]], start: int, *, durable: bool = True) -> None:
        """``durable=False`` leaves the new lines unsynced until ``sync``."""
        if not self._sealed:  # a torn last line must not swallow the next row
            seal_tail(self.path)
            self._sealed = True
        if self._first is None:
            self._first = self._open_first(start)
        for n in range(start, len(rows)):
            if n - self._first >= SEGMENT:
                self._rotate()
                self._first = n
                self._merge()
            if durable:
                self._journal.append("row", n=n, row=rows[n])
            else:
                self._journal.append("row", n=n, row=rows[n], fsync=False)
                self._unsynced.add(self.path)

    def sync(self) -> None:
        """fsync what ``append(durable=False)`` wrote (the open file, or the file it was sealed as)."""
        for path in self._unsynced:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._unsynced.clear()

    def rewrite(self, rows: list[dict[str, Any]]) -> None:
        """Replace the rows whole: a migrated state, a fresh run, or rows changed in place.

        All rows go into the open file first, atomically; the sealed files are removed after. A kill in
        between leaves both, which reads right: the open file's rows start again at 0."""
        at = now()
        lines = [json.dumps({"at": at, "kind": "row", "n": n, "row": row}, default=str, ensure_ascii=False)
                 for n, row in enumerate(rows)]
        atomic.write_text(self.path, "".join(line + "\n" for line in lines))
        self._sealed = True
        self._first = 0
        for path in self._sealed_files():
            path.unlink(missing_ok=True)

    def _rotate(self) -> None:
        """Seal the open file under its first row's index; the next append starts a new one."""
        self.sealed.mkdir(exist_ok=True)
        target = self.sealed / f"{self._first:08d}.jsonl"
        os.replace(self.path, target)  # a synced file (or one sync() will reach by its new name): only a rename
        if self.path in self._unsynced:
            self._unsynced.discard(self.path)
            self._unsynced.add(target)

    def _merge(self) -> None:
        """While the newest ``FANOUT`` sealed files hold as many rows each, join them into one.

        So the sealed files stay few (every check of specd's machinery stats each one, at every step) and
        the rows each one holds grow by levels: 25, 200, 1,600. The joined file is written whole, synced, and
        renamed over the first of them (it starts with the same row); the others are removed after. A kill in
        between leaves rows twice, which reads right: a row index going back restarts from there."""
        while True:
            files = self._sealed_files()
            starts = [int(p.name.split(".")[0]) for p in files] + [self._first or 0]
            spans = [b - a for a, b in zip(starts, starts[1:], strict=False)]
            if len(files) < FANOUT or len(set(spans[-FANOUT:])) != 1:
                return
            group = files[-FANOUT:]
            atomic.write_text(group[0], "".join(path.read_text(encoding="utf-8") for path in group))
            for path in group[1:]:  # oldest first: a kill leaves the newest ones, which read right after it
                path.unlink(missing_ok=True)
            self._unsynced -= set(group)  # all in the joined file, which is synced

    def _open_first(self, start: int) -> int:
        """The first row index in the open file (read from its first line), or ``start`` when it is empty."""
        for _, record in read_records(self.path):
            n = record.get("n")
            return n if type(n) is int else start
        return start

    def _sealed_files(self) -> list[Path]:
        try:
            names = sorted(p.name for p in os.scandir(self.sealed) if p.name.endswith(".jsonl"))
        except OSError:
            return []
        return [self.sealed / name for name in names]

    def _records(self) -> Iterator[tuple[Path, int, dict[str, Any]]]:
        for path in [*self._sealed_files(), self.path]:
            for lineno, record in read_records(path):
                yield path, lineno, record

    def exists(self) -> bool:
        return os.path.lexists(self.path)


def _fix(snapshot: Path, history: Path) -> str:
    return (f"restore both files from git (`git checkout -- {snapshot} {history}`), or move both aside "
            f"to start the task's run over")
