"""Reading Claude Code's stream-json as it arrives.

Every line goes to the transcript (redacted) before anything else happens, so
a crash mid-step still leaves the raw stream on disk. Assistant text and tool
calls become ``agent_text``/``agent_tool`` events for the live view; the
``result`` event is kept for the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from specd.agents.cli_run import json_events
from specd.events import EventBus
from specd.redact import redact

SUMMARY_CHARS = 160
ERROR_CHARS, ERRORS_KEPT = 1000, 50  # unparseable lines kept to explain a failure: the last few, shortened
# Which input field says the most about a call of each built-in tool.
_TOOL_FIELD = {"Bash": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path",
               "NotebookEdit": "notebook_path", "Glob": "pattern", "Grep": "pattern", "WebFetch": "url",
               "WebSearch": "query", "Task": "description", "Agent": "description"}
REPORT_TOOL = "StructuredOutput"  # how --json-schema output arrives; shown as the step's outcome instead


@dataclass
class StreamLog:
    """What one invocation said: the final result event, plus enough to explain a failure without one."""

    result: dict[str, Any] | None = None
    session_id: str | None = None
    last_text: str = ""
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # file writes Claude Code's deny rules turned away
    _writes: dict[str, str] = field(default_factory=dict)  # tool_use id -> "Write (path)", for that


WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
DENIED = "denied by your permission settings"  # Claude Code's tool error for a call a deny rule refused


def read_stream(lines: Iterable[str], transcript: IO[str], events: EventBus, step: str) -> StreamLog:
    log = StreamLog()
    # Claude Code prints plain text when it fails before streaming; a capped line lands there too.
    for event in json_events(lines, transcript, lambda text: note(log.errors, text)):
        _take(event, log, events, step)
    return log


def note(errors: list[str], text: str) -> None:
    """Keep a line that explains a failure, cut short, with the last ERRORS_KEPT of them."""
    errors.append(_brief(text))
    del errors[:-ERRORS_KEPT]


def _take(event: dict[str, Any], log: StreamLog, events: EventBus, step: str) -> None:
    kind = event.get("type")
    if isinstance(event.get("session_id"), str):
        log.session_id = event["session_id"]
    if kind == "result":
        log.result = event
    elif kind == "assistant":
        message = event.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                log.last_text = str(block["text"]).strip()
                events.emit("agent_text", step=step, text=redact(log.last_text))
            elif block.get("type") == "tool_use" and block.get("name") != REPORT_TOOL:
                name = str(block.get("name", "?"))
                summary = tool_summary(name, block.get("input"))
                events.emit("agent_tool", step=step, tool=name, summary=redact(summary))
                if name in WRITE_TOOLS:
                    log._writes[str(block.get("id"))] = f"{name} ({summary})"
    elif kind == "user":
        _refusals(event, log)


def _refusals(event: dict[str, Any], log: StreamLog) -> None:
    """A write the deny rules refused is told to the model as a tool error, and the step would go on: note it,
    so the step ends BLOCKED (specd's machinery is what those rules guard)."""
    message = event.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    for block in content if isinstance(content, list) else []:
        if isinstance(block, Mapping) and block.get("type") == "tool_result" and block.get("is_error"):
            call = log._writes.get(str(block.get("tool_use_id")))
            if call and DENIED in str(block.get("content", "")).lower():
                log.refused.append(call)


def _brief(text: str) -> str:
    """A long unparseable line, shortened for a reason: its start, and its end (where a cut mark is)."""
    return text if len(text) <= ERROR_CHARS else f"{text[:ERROR_CHARS // 2]} … {text[-ERROR_CHARS // 2:]}"


def tool_summary(name: str, arguments: Any) -> str:
    if not isinstance(arguments, Mapping):
        return ""
    key = _TOOL_FIELD.get(name)
    text = str(arguments[key]) if key and key in arguments else json.dumps(arguments, default=str)
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"
