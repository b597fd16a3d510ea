"""Repeated reads: a read-only call whose exact result the conversation already holds.

Every result stays in the conversation for the rest of the step and is resent on
each later turn (and, with caching, written to the cache once more). When the
model repeats a read-only call (same tool, same arguments) and the result is
byte for byte what an earlier call in this conversation returned, it gets a
short pointer to that result instead of a second copy.

The check runs against the messages themselves, not a memory of past calls, so
a resume, a handoff (which starts a new conversation) or a change to the file
in between all lead to the full result being sent.
"""

from __future__ import annotations

from typing import Any

READ_ONLY = frozenset({"read_file", "search_files", "list_files"})
MIN_CHARS = 200  # a shorter result costs less to resend than the pointer saves
POINTER = "Unchanged: the same result as your {name} call {id} above."


def pointer(messages: list[dict[str, Any]], name: str, args: dict[str, Any], output: str) -> str | None:
    """The text to send instead of ``output``, or None to send it as it is."""
    if name not in READ_ONLY or len(output) < MIN_CHARS:
        return None
    same_call: set[str] = set()
    found: str | None = None
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") == name and block.get("input") == args:
                same_call.add(str(block.get("id")))
            elif (kind == "tool_result" and block.get("tool_use_id") in same_call
                  and not block.get("is_error") and block.get("content") == output):
                found = str(block["tool_use_id"])
    return POINTER.format(name=name, id=found) if found else None
