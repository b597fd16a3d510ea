"""The JSON Schema a CLI agent's final structured answer must match, for a backend that takes one per step.

Codex takes it as ``--output-schema``, so the step's declared outcomes are an enum there and the CLI holds the
model to them. Claude Code gets one schema for every step instead (its tool list opens the cached prefix, see
agents/claude_code/options.py), and specd checks the outcome after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def outcome_schema(outcomes: Sequence[str], output: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The outcome (one of ``outcomes``), a one-line summary and, when the step declares one, its typed
    ``output`` (issue 30), which specd validates again after."""
    schema: dict[str, Any] = {
        "type": "object", "additionalProperties": False, "required": ["outcome", "summary"],
        "properties": {"outcome": {"type": "string", "enum": list(outcomes)},
                       "summary": {"type": "string", "description": "one line: what was done or decided"}}}
    if output is not None:
        schema["properties"]["output"] = dict(output)
        schema["required"].append("output")
    return schema
