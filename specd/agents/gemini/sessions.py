"""Which Gemini CLI session belongs to which conversation of a run.

The CLI names a session itself (the ``init`` event's ``session_id``) and continues one with ``--resume
<id>``, from the session files in its config folder (the task's copy, kept with the transcripts). A step
starts a new session every time it runs; an inline hook shares its step's ``conversation`` string and
resumes the step's session; a subagent hook has a conversation of its own and starts fresh. The map
lives beside the run's transcripts.
"""

from __future__ import annotations

import json
from pathlib import Path

from specd.agents.base import AgentRequest
from specd.state.atomic import write_json

MAP = "gemini-sessions.json"


class SessionMap:
    def __init__(self, task_dir: Path, run_id: str) -> None:
        self.path = task_dir / "transcripts" / run_id / MAP

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}  # a lost map only costs an inline hook its shared context
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def resume(self, request: AgentRequest) -> str | None:
        """The session an inline hook continues: its step's; None for a step or a fresh hook."""
        return self._load().get(request.conversation) if request.kind == "hook" else None

    def remember(self, request: AgentRequest, session_id: str) -> None:
        sessions = self._load()
        sessions[request.conversation] = session_id
        write_json(self.path, sessions)
