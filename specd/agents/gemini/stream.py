"""Reading the Gemini CLI's ``--output-format stream-json`` as it arrives.

The events (CLI 0.61): ``init`` (session_id, model), ``message`` (role user/assistant; the assistant's text
comes in ``delta`` pieces), ``tool_use`` (tool_name, tool_id, parameters), ``tool_result`` (tool_id,
status success/error, output or error), ``error`` (a warning or error said mid-run) and ``result`` (status,
error, stats with the tokens per model). Every line goes to the transcript (redacted) first, so a crash
mid-step still leaves the raw stream on disk. The text after the last tool call is the final answer, where
specd's outcome JSON is looked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from specd.agents.claude_code.stream import note
from specd.agents.cli_run import json_events
from specd.events import EventBus
from specd.redact import redact
from specd.system.machinery import machinery

SUMMARY_CHARS = 160
# Which parameter says the most about a call of each built-in tool.
_TOOL_FIELD = {"run_shell_command": "command", "read_file": "file_path", "write_file": "file_path",
               "replace": "file_path", "list_directory": "dir_path", "glob": "pattern",
               "search_file_content": "pattern", "grep_search": "pattern", "web_fetch": "prompt",
               "google_web_search": "query", "read_many_files": "include"}
WRITE_TOOLS = ("write_file", "replace")


@dataclass
class StreamLog:
    """What one invocation said: the result event, the final text, and enough to explain a failure."""

    result: dict[str, Any] | None = None
    session_id: str | None = None
    final_text: str = ""  # the assistant's text after its last tool call
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # writes to specd's machinery that the jail turned away
    _writes: dict[str, str] = field(default_factory=dict)  # tool_id -> the machinery path it tried to write


def read_stream(lines: Iterable[str], transcript: IO[str], events: EventBus, step: str, root: Path) -> StreamLog:
    log = StreamLog()
    # the CLI prints plain text when it fails before streaming
    for event in json_events(lines, transcript, lambda text: note(log.errors, text)):
        _take(event, log, events, step, root)
    if log.final_text.strip():
        events.emit("agent_text", step=step, text=redact(log.final_text.strip()))
    return log


def _take(event: dict[str, Any], log: StreamLog, events: EventBus, step: str, root: Path) -> None:
    kind = event.get("type")
    if kind == "init" and isinstance(event.get("session_id"), str):
        log.session_id = event["session_id"]
    elif kind == "result":
        log.result = event
    elif kind == "message" and event.get("role") == "assistant":
        log.final_text += str(event.get("content") or "") if event.get("delta") else f"\n{event.get('content')}"
    elif kind == "tool_use":
        if log.final_text.strip():  # text before a tool call is narration: shown, not taken as the answer
            events.emit("agent_text", step=step, text=redact(log.final_text.strip()))
        log.final_text = ""
        name = str(event.get("tool_name", "?"))
        summary = tool_summary(name, event.get("parameters"))
        events.emit("agent_tool", step=step, tool=name, summary=redact(summary))
        target = _machinery_target(name, event.get("parameters"), root)
        if target:
            log._writes[str(event.get("tool_id"))] = f"{name} ({target})"
    elif kind == "tool_result" and event.get("status") == "error":
        call = log._writes.get(str(event.get("tool_id")))
        if call:
            log.refused.append(call)
    elif kind == "error" and event.get("severity") == "error":
        note(log.errors, str(event.get("message", "")))


def _machinery_target(name: str, parameters: Any, root: Path) -> str | None:
    """The project-relative path of a write into specd's machinery, else None."""
    if name not in WRITE_TOOLS or not isinstance(parameters, Mapping):
        return None
    path = Path(str(parameters.get("file_path") or ""))
    try:
        relative = (path if path.is_absolute() else root / path).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return None
    return str(relative) if machinery(relative.parts) else None


def tool_summary(name: str, arguments: Any) -> str:
    if not isinstance(arguments, Mapping):
        return ""
    key = _TOOL_FIELD.get(name)
    text = str(arguments[key]) if key and key in arguments else json.dumps(arguments, default=str)
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"
