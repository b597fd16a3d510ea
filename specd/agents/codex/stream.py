"""Reading ``codex exec --json`` as it arrives.

Codex prints one JSON event a line: ``thread.started`` (the session id), ``turn.started``, ``item.started``
/ ``item.updated`` / ``item.completed`` (messages, reasoning, shell commands, file changes, tool calls,
warnings), then ``turn.completed`` with the token usage or ``turn.failed``, and ``error`` for a failure
outside a turn. Every line goes to the transcript (redacted) first, so a crash leaves the raw stream on disk.

Codex has no turn limit of its own: each tool call it finishes counts as a turn here, and the reader stops
at ``max_turns`` so the caller can end the process.
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
ERRORS_KEPT, ERROR_CHARS = 50, 1000
# Codex's items that are tool calls, and the name the live view shows for each.
TOOL_ITEMS = {"command_execution": "shell", "file_change": "edit", "mcp_tool_call": "mcp", "web_search": "web_search"}


@dataclass
class CodexLog:
    """What one invocation said: the thread, the last message, the usage, and why it failed if it did."""

    thread_id: str | None = None
    last_message: str = ""
    usage: dict[str, Any] | None = None  # turn.completed's, the thread's running total
    failure: str | None = None  # turn.failed or error
    turns: int = 0  # tool calls finished
    over_turns: bool = False
    errors: list[str] = field(default_factory=list)  # unparseable lines, warnings: to explain a failure


def read_stream(lines: Iterable[str], transcript: IO[str], events: EventBus, step: str,
                max_turns: int | None = None) -> CodexLog:
    log = CodexLog()
    for event in json_events(lines, transcript, lambda text: _note(log, text)):  # plain text: a failed start
        _take(event, log, events, step)
        if max_turns is not None and log.turns > max_turns:
            log.over_turns = True
            break
    return log


def _take(event: dict[str, Any], log: CodexLog, events: EventBus, step: str) -> None:
    kind = event.get("type")
    if kind == "thread.started" and isinstance(event.get("thread_id"), str):
        log.thread_id = event["thread_id"]
    elif kind == "turn.completed" and isinstance(event.get("usage"), Mapping):
        log.usage = dict(event["usage"])
    elif kind == "turn.failed":
        error = event.get("error")
        log.failure = str(error.get("message") if isinstance(error, Mapping) else error or "turn failed")
    elif kind == "error":
        log.failure = str(event.get("message") or "error")
    elif kind in ("item.started", "item.completed") and isinstance(event.get("item"), Mapping):
        _item(event["item"], kind == "item.completed", log, events, step)


def _item(item: Mapping[str, Any], done: bool, log: CodexLog, events: EventBus, step: str) -> None:
    kind = item.get("type")
    if kind == "agent_message" and done:
        text = str(item.get("text") or "").strip()
        if text:
            log.last_message = text
            if report_of(text) is None:  # the final structured report is the step's outcome, not chat
                events.emit("agent_text", step=step, text=redact(text))
    elif kind in TOOL_ITEMS:
        if not done:
            events.emit("agent_tool", step=step, tool=TOOL_ITEMS[str(kind)], summary=redact(tool_summary(item)))
        else:
            log.turns += 1
    elif kind == "error" and done:
        _note(log, str(item.get("message") or ""))


def tool_summary(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind == "command_execution":
        text = str(item.get("command") or "")
    elif kind == "file_change":
        changes = item.get("changes")
        text = ", ".join(str(c.get("path")) for c in changes if isinstance(c, Mapping)) \
            if isinstance(changes, list) else ""
    elif kind == "mcp_tool_call":
        text = f"{item.get('server')}.{item.get('tool')}"
    else:
        text = str(item.get("query") or "")
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def report_of(text: str) -> dict[str, Any] | None:
    """The structured report ``--output-schema`` asked for, when ``text`` is one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, dict) and isinstance(data.get("outcome"), str):
        return data
    return None


def _note(log: CodexLog, text: str) -> None:
    text = text.strip()
    if text:
        log.errors.append(text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + " …")
        del log.errors[:-ERRORS_KEPT]
