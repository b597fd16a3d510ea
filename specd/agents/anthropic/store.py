"""Conversations and transcripts on disk, under ``<task>/transcripts/<run_id>/``.

A conversation is saved after every turn (atomically), so a step that fails
or is interrupted resumes from its last complete turn. A transcript is an
append-only JSONL log of what was sent and received. Both pass through the
redaction filter first: these folders get committed and shared.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specd.agents.base import AgentRequest
from specd.agents.proc import transcript_path
from specd.redact import redact_obj
from specd.state import atomic


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name) or "_"


def run_dir(request: AgentRequest) -> Path:
    return request.task_dir / "transcripts" / _safe(request.run_id)


class ConversationStore:
    def __init__(self, request: AgentRequest) -> None:
        self.request = request
        self.path = run_dir(request) / f"{_safe(request.conversation)}.conversation.json"

    def load(self) -> dict[str, Any] | None:
        path = self.path
        if not path.is_file() and self.request.attempt > 1:
            path = self._from_earlier_run() or path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None  # missing or torn: start the conversation afresh rather than fail the step
        return data if isinstance(data, dict) and isinstance(data.get("messages"), list) else None

    def _from_earlier_run(self) -> Path | None:
        # A re-run may come with a new run id; the open conversation of the same
        # id in the newest earlier run is the one to resume.
        found = [
            p for p in (self.request.task_dir / "transcripts").glob(f"*/{self.path.name}") if p != self.path
        ]
        return max(found, key=lambda p: p.stat().st_mtime) if found else None

    def save(self, data: dict[str, Any]) -> None:
        atomic.write_text(self.path, json.dumps(redact_obj(data), ensure_ascii=False, indent=1))

    def archive(self, number: int) -> None:
        """Keep a conversation that was handed off, beside its successor."""
        if self.path.is_file():
            self.path.replace(self.path.with_name(f"{self.path.stem}.handoff-{number}.json"))


class Transcript:
    def __init__(self, request: AgentRequest) -> None:
        # Same naming and one counter with the other backends' logs.
        label = _safe(request.step + ("-hook" if request.kind == "hook" else ""))
        self.path = transcript_path(request.task_dir, _safe(request.run_id), label, ".jsonl")

    def write(self, kind: str, **data: Any) -> None:
        record = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "type": kind, **data}
        line = json.dumps(redact_obj(record), ensure_ascii=False, default=str)
        atomic.append_text(self.path, line + "\n")
