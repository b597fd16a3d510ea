"""A finished ``codex exec`` → an AgentResult, or a one-line reason why the step failed.

Codex reports tokens, never dollars: the cost is the usage priced from the OpenAI price table
(``specd.agents.openai.prices``; a pipeline's ``price_per_mtok`` or ``pricing`` first). Its
``input_tokens`` hold the cached ones (``cached_input_tokens``) and any cache writes; specd records them
apart, as for every backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specd.agents.anthropic.pricing import Price
from specd.agents.base import AgentFailed, AgentResult, Usage
from specd.agents.codex.stream import CodexLog, report_of
from specd.redact import redact

REASON_CHARS = 240
FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def usage_of(total: Mapping[str, Any] | None, before: Mapping[str, Any], price: Price) -> Usage:
    """This invocation's usage: the thread's running total less what it had before (a resumed thread)."""
    now = {key: _count(total, key) - _count(before, key) for key in FIELDS}
    inp, cached, write, out = (max(0, now[key]) for key in FIELDS)
    fresh = max(0, inp - cached - write)
    cost = (fresh * price.input + write * price.cache_write + cached * price.cache_read + out * price.output) / 1e6
    return Usage(fresh, out, write, cached, round(cost, 6))


def verdict(log: CodexLog, returncode: int, usage: Usage, transcript: Path, turns: int | None) -> AgentResult:
    if log.over_turns:
        raise AgentFailed(f"Codex reached the turn limit ({turns} tool calls) before finishing the step; raise "
                          "max_turns for this step or in the pipeline's agent block", usage, transcript)
    if log.failure is not None:
        raise AgentFailed(_line(f"Codex failed: {log.failure}"), usage, transcript)
    if log.usage is None or returncode != 0:
        said = log.errors[-1] if log.errors else log.last_message or "no output"
        raise AgentFailed(_line(f"Codex exited with status {returncode} before finishing its turn: {said}"),
                          usage, transcript)
    data: dict[str, Any] = {"session_id": log.thread_id}
    report = report_of(log.last_message)
    if report is not None:
        if "output" in report:  # the step's typed output (issue 30), checked against its schema by the engine
            data["output"] = report["output"]
        return AgentResult(outcome=report["outcome"], summary=str(report.get("summary", "")), usage=usage,
                           transcript=transcript, data=data, reported=True)
    # No structured report: "done" unless the workflow's verdict file says otherwise (decided by dispatch).
    text = log.last_message
    return AgentResult(summary=_line(text.splitlines()[-1]) if text else "", usage=usage,
                       transcript=transcript, data=data)


def _count(data: Mapping[str, Any] | None, key: str) -> int:
    value = (data or {}).get(key)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _line(text: str) -> str:
    flat = redact(" ".join(text.split()))
    return flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 1] + "…"
