"""A JSON-lines transcript line as the text a person follows: what the model said, not the raw records.

claude_code transcripts hold Claude Code's stream-json (``assistant`` messages, ``user`` tool results,
a ``result``), gemini ones the Gemini CLI's (``message`` pieces, ``tool_use``, ``result``); anthropic ones
hold specd's own turn records (``request``, ``response``, ``tool``). Only the model's prose and stderr are
shown: tool calls are already in the journal (``agent_tool`` events), and tool results and requests are
long and mostly noise while following. A line that is not JSON (Claude Code printing a plain error before
it streams) is shown as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def readable(line: str) -> list[str]:
    if not line.strip():
        return []
    try:
        record: Any = json.loads(line)
    except (ValueError, RecursionError):
        return [line]
    if not isinstance(record, Mapping):
        return [line]
    kind = record.get("type")
    if kind == "assistant":  # claude_code: the message sits inside
        message = record.get("message")
        return _prose(message.get("content") if isinstance(message, Mapping) else None)
    if kind == "response":  # anthropic: specd's record of one model turn
        return _prose(record.get("content"))
    if kind == "message" and record.get("role") == "assistant":  # gemini: the model's text, piece by piece
        return [text for text in str(record.get("content") or "").splitlines() if text.strip()]
    if kind == "stderr" and str(record.get("text", "")).strip():
        return [f"stderr: {record['text']}"]
    return []


def _prose(content: Any) -> list[str]:
    lines: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            lines += [text for text in str(block.get("text", "")).splitlines() if text.strip()]
    return lines
