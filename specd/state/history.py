"""``.pipeline-state.history.jsonl``: the finished rows of a run, one fsynced line each.

Each line is a journal record ``{"at", "kind": "row", "n": <index>, "row": {...}}``.
Saving appends only the rows not yet written, so a step costs the same at row
2,000 as at row 10. The snapshot (``.pipeline-state.json``) says how many rows
count; lines beyond that count are the tail of a save that was killed between
the append and the snapshot, and are ignored: the step they belong to re-runs
and is recorded once. A line whose ``n`` is below the rows read so far starts a
rewrite of the tail from there (the re-run's row replacing the ignored one).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.state import atomic
from specd.state.journal import Journal, read_records, seal_tail
from specd.state.model import now

HISTORY_FILE = ".pipeline-state.history.jsonl"


class HistoryFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._journal = Journal(path)
        self._sealed = False

    def read(self, count: int, *, snapshot: Path) -> list[dict[str, Any]]:
        """The first ``count`` rows; lines past them are a killed save's tail and do not count."""
        rows: list[dict[str, Any]] = []
        for lineno, record in read_records(self.path):
            n, row = record.get("n"), record.get("row")
            if record.get("kind") != "row" or type(n) is not int or not isinstance(row, dict):
                raise TaskError(f"{self.path}:{lineno}: not a history row (needs an integer 'n' and an "
                                f"object 'row')", fix=_fix(snapshot, self.path))
            if n > len(rows):
                if n >= count:
                    break  # a gap past the counted rows: a killed save's tail
                raise TaskError(f"{self.path}:{lineno}: history row {n} follows row {len(rows) - 1}; "
                                f"rows {len(rows)}..{n - 1} are missing", fix=_fix(snapshot, self.path))
            del rows[n:]
            rows.append(row)
        if len(rows) < count:
            raise TaskError(f"{self.path}: {snapshot.name} counts {count} finished rows but this file holds "
                            f"{len(rows)}", fix=_fix(snapshot, self.path))
        return rows[:count]

    def append(self, rows: list[dict[str, Any]], start: int) -> None:
        if not self._sealed:  # a torn last line must not swallow the next row
            seal_tail(self.path)
            self._sealed = True
        for n in range(start, len(rows)):
            self._journal.append("row", n=n, row=rows[n])

    def rewrite(self, rows: list[dict[str, Any]]) -> None:
        """Replace the file whole: a migrated state, a fresh run, or rows changed in place."""
        at = now()
        lines = [json.dumps({"at": at, "kind": "row", "n": n, "row": row}, default=str, ensure_ascii=False)
                 for n, row in enumerate(rows)]
        atomic.write_text(self.path, "".join(line + "\n" for line in lines))
        self._sealed = True

    def exists(self) -> bool:
        return os.path.lexists(self.path)


def _fix(snapshot: Path, history: Path) -> str:
    return (f"restore both files from git (`git checkout -- {snapshot} {history}`), or move both aside "
            f"to start the task's run over")
