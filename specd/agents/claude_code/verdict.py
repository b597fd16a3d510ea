"""The ``result`` event → an AgentResult, or a one-line reason why the step failed.

Claude Code exits 0 even when it was denied the tools it needed, so exit codes
alone are not trusted: the result event's subtype, ``is_error`` and
``permission_denials`` decide, and the raw stream stays in the transcript.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specd.agents.base import AgentFailed, AgentResult, BudgetExhausted, Usage
from specd.agents.claude_code.stream import StreamLog, tool_summary
from specd.redact import redact

REASON_CHARS = 240


def usage_of(result: Mapping[str, Any]) -> Usage:
    """Tokens summed over every model the session used (``usage`` reads zero when a budget stopped it)."""
    per_model = result.get("modelUsage")
    cost = _number(result.get("total_cost_usd"))
    if isinstance(per_model, Mapping) and per_model:
        rows = [row for row in per_model.values() if isinstance(row, Mapping)]
        inp, out, write, read = (int(sum(_number(row.get(key)) for row in rows)) for key in
                                 ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"))
        return Usage(inp, out, write, read, cost)
    usage = result.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    inp, out, write, read = (int(_number(usage.get(key))) for key in keys)
    return Usage(inp, out, write, read, cost)


def verdict(log: StreamLog, returncode: int, transcript: Path, session_id: str) -> AgentResult:
    result = log.result
    if result is None:
        said = log.errors[-1] if log.errors else log.last_text or "no output"
        raise AgentFailed(_line(f"Claude Code exited with status {returncode} before reporting a result: {said}"),
                          transcript=transcript)
    usage = usage_of(result)
    subtype = str(result.get("subtype", ""))
    if subtype == "error_max_budget_usd":
        raise BudgetExhausted(f"cost budget reached: Claude Code stopped after spending ${usage.cost_usd:g}, "
                              "the remainder of the run/step budget", usage)
    if subtype == "error_max_turns":
        turns = result.get("num_turns")
        raise AgentFailed(f"Claude Code reached its turn limit ({turns} turns) before finishing the step; "
                          "raise max_turns for this step or in the pipeline's agent block", usage, transcript)
    if result.get("is_error") or subtype != "success":
        label = subtype if subtype not in ("", "success") else "error"
        raise AgentFailed(_line(f"Claude Code failed ({label}): {_error_text(result)}"), usage, transcript)
    denied = result.get("permission_denials")
    if isinstance(denied, list) and denied:
        raise AgentFailed(_line(f"Claude Code was denied {len(denied)} tool call(s): {_denials(denied)}; allow "
                                "them with agent.allowed_tools or agent.permission_mode in the pipeline file"),
                          usage, transcript)
    if log.refused:
        raise AgentFailed(_line(f"Claude Code tried to write specd's machinery, which its deny rules refused: "
                                f"{', '.join(log.refused)}; a human edits the pipeline, hooks, workflows and "
                                "run state"), usage, transcript)
    data: dict[str, Any] = {"session_id": session_id}
    output = result.get("structured_output")
    if isinstance(output, Mapping) and isinstance(output.get("outcome"), str):
        if "output" in output:  # the step's typed output (issue 30), checked against its schema by the engine
            data["output"] = output["output"]
        return AgentResult(outcome=output["outcome"], summary=str(output.get("summary", "")), usage=usage,
                           transcript=transcript, data=data, reported=True)
    # No structured output: "done" unless the workflow's verdict file says otherwise (decided by dispatch).
    text = str(result.get("result") or "").strip()
    return AgentResult(summary=_line(text.splitlines()[-1]) if text else "", usage=usage,
                       transcript=transcript, data=data)


def _error_text(result: Mapping[str, Any]) -> str:
    errors = result.get("errors")
    if isinstance(errors, list) and errors:
        return "; ".join(str(error) for error in errors)
    status = result.get("api_error_status")
    text = str(result.get("result") or "").strip() or "no details"
    return f"API error {status}: {text}" if status and str(status) not in text else text


def _denials(denied: Sequence[Any]) -> str:
    calls = []
    for entry in denied:
        if isinstance(entry, Mapping):
            name = str(entry.get("tool_name", "?"))
            detail = tool_summary(name, entry.get("tool_input"))
            calls.append(f"{name} ({detail})" if detail else name)
    return ", ".join(calls)


def _line(text: str) -> str:
    flat = redact(" ".join(text.split()))
    return flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 1] + "…"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else 0.0
