"""Which Codex thread belongs to which conversation of a run, and what that thread had used so far.

Codex names a thread itself (``thread.started``), so a step learns its id from the stream and records it
here. An inline hook shares its step's ``conversation`` string and continues that thread with ``codex exec
resume``; a subagent hook, or a step run again, starts a new one. Codex reports a resumed thread's usage
as the running total of the whole thread, so the total at the end of each invocation is kept too: the hook
is charged only what it added. The map lives beside the run's transcripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specd.agents.base import AgentRequest
from specd.state.atomic import write_json

MAP = "codex-threads.json"


class ThreadMap:
    def __init__(self, task_dir: Path, run_id: str) -> None:
        self.path = task_dir / "transcripts" / run_id / MAP

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}  # a lost map only costs an inline hook its shared context
        return data if isinstance(data, dict) else {}

    def earlier(self, conversation: str) -> tuple[str | None, dict[str, Any]]:
        """(thread id, its usage total) of the conversation so far, or (None, {})."""
        entry = self._load().get(conversation)
        if not isinstance(entry, dict) or not isinstance(entry.get("thread"), str):
            return None, {}
        usage = entry.get("usage")
        return entry["thread"], usage if isinstance(usage, dict) else {}

    def resumable(self, request: AgentRequest) -> tuple[str | None, dict[str, Any]]:
        """What an inline hook continues; a step, or a hook without a step thread, starts fresh."""
        return self.earlier(request.conversation) if request.kind == "hook" else (None, {})

    def remember(self, conversation: str, thread: str, usage: dict[str, Any] | None) -> None:
        threads = self._load()
        threads[conversation] = {"thread": thread, "usage": usage or {}}
        write_json(self.path, threads)


def retry_note(request: AgentRequest, earlier: str | None) -> str:
    """Prepended to a retried step's prompt: it starts fresh, but should know it is not the first try."""
    if request.kind != "step" or request.attempt <= 1:
        return ""
    thread = f" (Codex thread {earlier})" if earlier else ""
    return (f"Note: this is attempt {request.attempt} of this step. An earlier attempt{thread} did not finish. "
            "Files may already hold part of its work: check them before redoing anything.\n\n")
