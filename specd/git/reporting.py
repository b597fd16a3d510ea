"""Files an agent names as its own work.

A command agent may list the paths it changed in its result (``"files": [...]``, relative to the
project). specd commits those even when another run's step was open in the same tree at the same
time, which otherwise leaves a path to the run that can tell it is its own.
"""

from __future__ import annotations

from typing import Any

from specd.agents.base import Agent, AgentRequest, AgentResult
from specd.git.recorder import GitRecorder


class ReportingAgent:
    """Wraps the run's agent: files its result names (``files``) are that step's own, even when
    another run was working in the same tree at the same time."""

    def __init__(self, agent: Agent, recorder: GitRecorder) -> None:
        self.agent, self.recorder = agent, recorder
        self.name = agent.name

    def run(self, request: AgentRequest) -> AgentResult:
        result = self.agent.run(request)
        files = result.data.get("files")
        if isinstance(files, list):
            self.recorder.note_reported(f for f in files if isinstance(f, str) and f)
        return result

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.agent, attribute)
