"""The stored conversation in chat completions terms, and a completion back in stored terms.

The conversation is kept, saved and resumed in the anthropic backend's shape (content blocks: text,
tool_use, tool_result), so the shared loop, its resume and handoff, the repeats check and the
transcripts need no second format. Only the wire differs, and it is translated here at send time:
- the system prompt is the first message;
- an assistant turn is one message: its text, and its tool_use blocks as ``tool_calls``;
- a user turn's tool results become ``tool`` messages, which must directly follow the assistant
  message that asked for them, and any text after them one ``user`` message.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

# Chat completions' finish reasons, as the stop reasons the shared loop reads.
STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "stop": "end_turn",
                "length": "max_tokens", "content_filter": "refusal"}
_ids = itertools.count(1)


def tools(anthropic_tools: Sequence[dict[str, Any]], outcomes: Sequence[str]) -> list[dict[str, Any]]:
    """Function tools; complete_step's outcome is limited to the step's declared outcomes, so a server
    that holds the model to its schema (constrained decoding) cannot produce another."""
    out = []
    for tool in anthropic_tools:
        schema = tool["input_schema"]
        if tool["name"] == "complete_step" and outcomes:
            outcome = {**schema["properties"]["outcome"], "enum": list(outcomes)}
            schema = {**schema, "properties": {**schema["properties"], "outcome": outcome}}
        out.append({"type": "function", "function": {"name": tool["name"], "description": tool["description"],
                                                     "parameters": schema}})
    return out


def messages(system: str, stored: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in stored:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if message["role"] == "assistant":
            out.append(_assistant(blocks))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                text = _text(block.get("content"))
                out.append({"role": "tool", "tool_call_id": block["tool_use_id"],
                            "content": f"[error] {text}" if block.get("is_error") else text})
        texts = [b["text"] for b in blocks if b.get("type") == "text"]
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text" and b.get("text"))
    calls = [{"id": b["id"], "type": "function",
              "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
             for b in blocks if b.get("type") == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def blocks(message: Any) -> list[dict[str, Any]]:
    """A completion's message (the SDK's object) as stored content blocks."""
    found: list[dict[str, Any]] = []
    if message.content:
        found.append({"type": "text", "text": str(message.content)})
    for call in message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:
            continue  # a custom (non-function) tool call: specd offers none
        found.append({"type": "tool_use", "id": call.id or f"call_specd_{next(_ids)}", "name": function.name,
                      "input": arguments(function.arguments)})
    return found


def arguments(raw: str | None) -> dict[str, Any]:
    """The call's arguments; text that is not a JSON object is passed on whole, so the tool's error
    names what the model sent instead of an empty call."""
    try:
        parsed = json.loads(raw or "{}")
    except (ValueError, RecursionError):  # the model's arguments, nested past json's depth
        return {"unparsed_arguments": raw}
    return parsed if isinstance(parsed, dict) else {"unparsed_arguments": raw}
