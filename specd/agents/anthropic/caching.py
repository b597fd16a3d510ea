"""Prompt-cache breakpoints, placed on a copy of the request at send time.

Four breakpoints, the API's maximum:
1. the last tool, 2. the system prompt: both identical across steps, so later
steps read them from the cache;
3. the preloaded task files (first block of the first user turn): shared by
every turn of the step, and by the next step while the files are unchanged;
4. a rolling one on the newest block, so each turn reads everything before it
and writes only what is new. The API finds the previous turn's entry by
looking back from this breakpoint, so one rolling breakpoint is enough.
The stored conversation never carries ``cache_control``: it is saved and
resumed as plain messages.
"""

from __future__ import annotations

import copy
from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def request_parts(
    tools: list[dict[str, Any]], system: str, messages: list[dict[str, Any]], *, enabled: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(tools, system blocks, messages) ready to send."""
    system_blocks: list[dict[str, Any]] = [{"type": "text", "text": system}]
    if not enabled:
        return tools, system_blocks, messages
    tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}] if tools else tools
    system_blocks[-1]["cache_control"] = EPHEMERAL
    messages = copy.deepcopy(messages)
    _mark(messages, 0, 0)
    if messages:
        last = messages[-1]
        _mark(messages, len(messages) - 1, len(_blocks(last)) - 1)
    return tools, system_blocks, messages


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        message["content"] = content = [{"type": "text", "text": content}]
    return list(content)


def _mark(messages: list[dict[str, Any]], index: int, block: int) -> None:
    if index >= len(messages):
        return
    blocks = _blocks(messages[index])
    # Thinking blocks cannot carry cache_control; walk back to one that can.
    while block >= 0 and blocks[block].get("type") in {"thinking", "redacted_thinking"}:
        block -= 1
    if block >= 0:
        messages[index]["content"][block]["cache_control"] = EPHEMERAL
