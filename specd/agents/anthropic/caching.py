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

Lifetimes: an entry lives 5 minutes from its last read. In auto mode steps
follow one another within seconds, so that is enough. Where the pipeline's
mode makes a person answer gates (interactive, semi-auto), the next step often
starts 20 minutes later and would write the whole prefix again; there the
three breakpoints that hold what every step of the task shares (tools, system
prompt, task files) ask for an hour. An hour's write costs 2x input against
1.25x, so it pays from the first gap longer than five minutes.
"""

from __future__ import annotations

import copy
from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
HOUR: dict[str, str] = {"type": "ephemeral", "ttl": "1h"}


def lasting(mode: str) -> bool:
    """Whether the shared breakpoints should outlive a gate: every mode but auto waits for people."""
    return mode != "auto"


def request_parts(
    tools: list[dict[str, Any]], system: str, messages: list[dict[str, Any]], *, enabled: bool,
    long: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(tools, system blocks, messages) ready to send; ``long``: the shared breakpoints last an hour."""
    system_blocks: list[dict[str, Any]] = [{"type": "text", "text": system}]
    if not enabled:
        return tools, system_blocks, messages
    shared = HOUR if long else EPHEMERAL
    tools = [*tools[:-1], {**tools[-1], "cache_control": shared}] if tools else tools
    system_blocks[-1]["cache_control"] = shared
    messages = copy.deepcopy(messages)
    _mark(messages, 0, 0, shared)
    if messages:
        last = messages[-1]
        # The API wants longer lifetimes before shorter ones: a rolling mark on the first block keeps the hour.
        end = len(_blocks(last)) - 1
        if len(messages) > 1 or end > 0:
            _mark(messages, len(messages) - 1, end, EPHEMERAL)
    return tools, system_blocks, messages


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        message["content"] = content = [{"type": "text", "text": content}]
    return list(content)


def _mark(messages: list[dict[str, Any]], index: int, block: int, marker: dict[str, str]) -> None:
    if index >= len(messages):
        return
    blocks = _blocks(messages[index])
    # Thinking blocks cannot carry cache_control; walk back to one that can.
    while block >= 0 and blocks[block].get("type") in {"thinking", "redacted_thinking"}:
        block -= 1
    if block >= 0:
        messages[index]["content"][block]["cache_control"] = marker
