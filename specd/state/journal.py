"""``events.jsonl``: an append-only journal of everything the loop reported.

Appends are one ``write`` of one line, flushed and fsynced; a process killed
mid-write can leave a torn last line, which ``read`` drops. ``seal_tail``
ends such a line before the next append, so the torn bytes do not swallow it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from specd.events import Event
from specd.redact import redact_obj
from specd.state import atomic
from specd.state.model import now
from specd.state.text import escaped, scrub


class Journal:
    """``durable``: the kinds fsynced on append (None: every line). The run state's history file is the
    record of what finished, so the event log fsyncs only what a later `status` must be able to trust."""

    def __init__(self, path: Path, durable: frozenset[str] | None = None) -> None:
        self.path = path
        self.durable = durable

    def append(self, kind: str, *, fsync: bool | None = None, **data: Any) -> None:
        """``fsync`` overrides the journal's rule for this line (the caller syncs it later itself)."""
        record = redact_obj({"at": now(), "kind": kind, **data})
        line = json.dumps(record, default=str, ensure_ascii=False) + "\n"
        durable = fsync if fsync is not None else self.durable is None or kind in self.durable
        try:
            # redacts the line again: nothing bypasses the one filter
            atomic.append_text(self.path, line, durable=durable)
        except OSError as exc:
            exc.filename = exc.filename or str(self.path)  # os.write names no file; the user needs one
            raise

    def listener(self, event: Event) -> None:
        if event.kind != "agent_text":  # model prose belongs in transcripts, not the journal
            self.append(event.kind, **event.data)

    def read(self, skipped: list[int] | None = None) -> list[dict[str, Any]]:
        return [record for _, record in read_records(self.path, skipped)]


def read_records(path: Path, skipped: list[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every whole JSON object line; torn or foreign lines are skipped, and their
    numbers added to ``skipped`` when it is given (blank lines are not counted)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    # Lines end at "\n" alone: splitlines() would also end one at U+2028, U+2029 or U+0085, which JSON leaves
    # as they are in a string (written with ensure_ascii=False), so a summary holding one would tear its record.
    for lineno, line in enumerate(text.split("\n"), 1):
        record = record_of(line)
        if record is not None:
            yield lineno, record
        elif skipped is not None and line.strip():
            skipped.append(lineno)


def record_of(line: str) -> dict[str, Any] | None:
    """One journal line as its record; None for a torn line from a crash mid-append, garbage nested too deep
    to be ours, or a line of a number or a list, which is no event of specd's."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if escaped(line):
        record = scrub(record)
    return record if isinstance(record, dict) else None


def seal_tail(path: Path) -> None:
    """End a torn last line (a crash mid-append) with a newline, so it stays one dropped line."""
    try:
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            last = handle.read(1)
    except OSError:
        return  # missing or empty: nothing to seal
    if last != b"\n":
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
