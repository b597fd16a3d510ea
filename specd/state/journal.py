"""``events.jsonl``: an append-only journal of everything the loop reported.

Appends are one ``write`` of one line, flushed and fsynced; a process killed
mid-write can leave a torn last line, which ``read`` drops.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specd.events import Event
from specd.redact import redact_obj
from specd.state import atomic
from specd.state.model import now


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, kind: str, **data: Any) -> None:
        record = redact_obj({"at": now(), "kind": kind, **data})
        line = json.dumps(record, default=str, ensure_ascii=False) + "\n"
        atomic.append_text(self.path, line)  # redacts the line again: nothing bypasses the one filter

    def listener(self, event: Event) -> None:
        if event.kind != "agent_text":  # model prose belongs in transcripts, not the journal
            self.append(event.kind, **event.data)

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        records = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn line from a crash mid-append
        return records
