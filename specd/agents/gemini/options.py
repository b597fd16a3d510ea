"""From the pipeline's ``agent:`` block and a request to the Gemini CLI's command line and settings file.

The CLI has flags for the model, the approval mode and the session, and reads the rest from
``$GEMINI_CLI_HOME/.gemini/settings.json``: specd writes that file before every invocation, in the task's own
config folder (``specd.system.agent_state``), never the user's ``~/.gemini``. It turns off what would reach
Google without being asked (usage statistics, telemetry, update checks, the IDE bridge), turns off the CLI's
own sandbox (a container or seatbelt profile: specd's jail is the boundary, the same for every backend, and
a container would hide the project's jail binds), turns off folder trust (its prompt cannot be answered
headless, and an untrusted folder silently drops the approval mode), and carries ``max_turns`` as
``model.maxSessionTurns``.

Approval is ``yolo`` by default: headless, a tool call that needs approval cannot be approved, and the jail
already decides what a tool may touch. ``agent.approval_mode`` (``auto_edit``, ``default``, ``plan``)
narrows it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.agents.base import AgentRequest
from specd.state.atomic import write_json
from specd.system.ownfiles import own_folder

APPROVAL_MODE = "yolo"
APPROVAL_MODES = ("default", "auto_edit", "yolo", "plan")


@dataclass(frozen=True)
class Options:
    model: str | None = None
    max_turns: int | None = None
    approval_mode: str = APPROVAL_MODE
    extra_args: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Options:
        turns = settings.get("max_turns")
        return cls(model=settings.get("model") or None, max_turns=int(turns) if turns else None,
                   approval_mode=str(settings.get("approval_mode") or APPROVAL_MODE),
                   extra_args=tuple(str(arg) for arg in settings.get("extra_args") or ()))

    def argv(self, binary: str, request: AgentRequest, resume: str | None) -> list[str]:
        """The whole command line; the prompt goes to stdin (``-p ""`` makes the run headless)."""
        argv = [binary, "-p", "", "--output-format", "stream-json", "--approval-mode", self.approval_mode]
        model = request.model or self.model
        if model:
            argv += ["--model", model]
        if resume:
            argv += ["--resume", resume]
        return argv + list(self.extra_args)

    def write_settings(self, home: Path, request: AgentRequest, env: Mapping[str, str]) -> Path:
        """The CLI's settings for this invocation, in the task's config folder (``$GEMINI_CLI_HOME``)."""
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": auth_type(env)}, "folderTrust": {"enabled": False}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "tools": {"sandbox": False},
            "ide": {"enabled": False},
        }
        turns = request.max_turns or self.max_turns
        if turns:
            settings["model"] = {"maxSessionTurns": int(turns)}
        path = own_folder(home / ".gemini") / "settings.json"  # a link the model's commands left is not followed
        write_json(path, settings)
        return path


def auth_type(env: Mapping[str, str]) -> str:
    """How the CLI signs in, as its settings name it: an API key, Vertex AI, or a Google login."""
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() == "true":
        return "vertex-ai"
    if env.get("GEMINI_API_KEY"):
        return "gemini-api-key"
    return "oauth-personal"


def outcome_schema(outcomes: Sequence[str], output: Mapping[str, Any] | None) -> dict[str, Any]:
    """The final answer's JSON Schema: the step's outcomes, a summary and, when the step declares one, its
    typed ``output`` (issue 30), which the engine validates again after."""
    schema: dict[str, Any] = {
        "type": "object", "required": ["outcome", "summary"],
        "properties": {"outcome": {"type": "string", "enum": list(outcomes)},
                       "summary": {"type": "string", "description": "one line: what was done or decided"}}}
    if output is not None:
        schema["properties"]["output"] = dict(output)
        schema["required"].append("output")
    return schema


def report_note(outcomes: Sequence[str], output: Mapping[str, Any] | None) -> str:
    """Appended to the prompt: the CLI takes no output schema, so the final answer's shape is asked for here
    and checked by specd (``specd.agents.gemini.answer``)."""
    schema = outcome_schema(outcomes, output)
    example = {"outcome": outcomes[0] if outcomes else "done", "summary": "one line saying what was done"}
    if output is not None:
        example["output"] = "..."
    return ("\n\n---\n\nWhen the step is finished, end with a final message that is exactly one JSON object and "
            f"nothing else, for example {json.dumps(example)}. It must match this JSON Schema: "
            f"{json.dumps(schema, sort_keys=True)}")
