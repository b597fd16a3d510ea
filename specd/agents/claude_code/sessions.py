"""Which Claude Code session belongs to which conversation of a run.

A step starts a new session every time it runs (Claude Code refuses a
``--session-id`` it has seen, and a retry should start clean). An inline hook
shares its step's ``conversation`` string, so it finds the step's session
here and continues it with ``--resume``; a subagent hook has a conversation of
its own and starts fresh. The map lives beside the run's transcripts.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from specd.agents.base import AgentRequest
from specd.state.atomic import write_json

MAP = "claude-sessions.json"


@dataclass(frozen=True)
class Session:
    id: str
    resumed: bool
    earlier: str | None = None  # the session of an earlier attempt of this step, for the retry note

    def flags(self) -> list[str]:
        return ["--resume", self.id] if self.resumed else ["--session-id", self.id]


class SessionMap:
    def __init__(self, task_dir: Path, run_id: str) -> None:
        self.path = task_dir / "transcripts" / run_id / MAP

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}  # a lost map only costs an inline hook its shared context
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def open(self, request: AgentRequest) -> Session:
        known = self._load().get(request.conversation)
        if request.kind == "hook" and known:
            return Session(known, resumed=True)
        session = Session(str(uuid.uuid4()), resumed=False, earlier=known if request.attempt > 1 else None)
        self._remember(request.conversation, session.id)
        return session

    def _remember(self, conversation: str, session_id: str) -> None:
        sessions = self._load()
        sessions[conversation] = session_id
        write_json(self.path, sessions)


def retry_note(request: AgentRequest, session: Session) -> str:
    """Prepended to a retried step's prompt: it starts fresh, but should know it is not the first try."""
    if request.kind != "step" or request.attempt <= 1:
        return ""
    earlier = f" (Claude Code session {session.earlier})" if session.earlier else ""
    return (f"Note: this is attempt {request.attempt} of this step. An earlier attempt{earlier} did not finish. "
            "Files may already hold part of its work: check them before redoing anything.\n\n")
