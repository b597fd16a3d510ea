"""The stream's end → an AgentResult, a one-line reason why the step failed, or what to ask again.

The CLI exits non-zero on an API error or a turn limit, but its ``result`` event says which, so that event
decides and the raw stream stays in the transcript. The outcome is the final answer's JSON object, which
specd asked for in the prompt; the CLI takes no output schema, so specd checks it here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specd.agents.base import AgentFailed, AgentResult, Usage
from specd.agents.gemini.stream import StreamLog
from specd.redact import redact

REASON_CHARS = 240
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def failure(log: StreamLog, returncode: int, usage: Usage, transcript: Path) -> None:
    """Raise AgentFailed when the invocation did not end well; return when it did."""
    result = log.result
    if result is None:
        said = log.errors[-1] if log.errors else log.final_text.strip() or "no output"
        raise AgentFailed(_line(f"the Gemini CLI exited with status {returncode} before reporting a result: "
                                f"{said}"), usage, transcript)
    if result.get("status") != "success":
        error = result.get("error")
        error = error if isinstance(error, Mapping) else {}
        kind, message = str(error.get("type") or "error"), str(error.get("message") or "no details")
        if "TurnLimit" in kind:
            raise AgentFailed("the Gemini CLI reached its turn limit before finishing the step; raise max_turns "
                              "for this step or in the pipeline's agent block", usage, transcript)
        raise AgentFailed(_line(f"the Gemini CLI failed ({kind}): {message}"), usage, transcript)
    if log.refused:
        raise AgentFailed(_line(f"Gemini tried to write specd's machinery, which the jail refused: "
                                f"{', '.join(log.refused)}; a human edits the pipeline, hooks, workflows and "
                                "run state"), usage, transcript)


def answer(text: str, outcomes: Sequence[str], output: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """(the reported object, "") when the final text holds a valid one, else (None, what was wrong with it)."""
    found = _last_object(text)
    if found is None:
        return None, "your final message held no JSON object with an `outcome`"
    outcome = found.get("outcome")
    if outcome not in outcomes:
        return None, f"`outcome` was {json.dumps(outcome)}, which is not one of: {', '.join(outcomes)}"
    if output is not None and "output" not in found:
        return None, "the object had no `output`, which this step must return"
    return found, ""


def result_of(found: Mapping[str, Any] | None, text: str, usage: Usage, transcript: Path,
              session_id: str) -> AgentResult:
    data: dict[str, Any] = {"session_id": session_id}
    if found is None:  # "done" unless the workflow's verdict file says otherwise (decided by dispatch)
        last = text.strip().splitlines()[-1] if text.strip() else ""
        return AgentResult(summary=_line(last), usage=usage, transcript=transcript, data=data)
    if "output" in found:  # the step's typed output (issue 30), checked against its schema by the engine
        data["output"] = found["output"]
    return AgentResult(outcome=str(found["outcome"]), summary=_line(str(found.get("summary", ""))), usage=usage,
                       transcript=transcript, data=data, reported=True)


def _last_object(text: str) -> dict[str, Any] | None:
    """The last JSON object with an ``outcome`` in the text: bare, or in a fenced block."""
    candidates = [*_FENCE.findall(text), text]
    decoder = json.JSONDecoder()
    best: dict[str, Any] | None = None
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except ValueError:
                value = None
            if isinstance(value, dict) and "outcome" in value:
                best = value
            start = candidate.find("{", start + 1)
    return best


def _line(text: str) -> str:
    flat = redact(" ".join(text.split()))
    return flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 1] + "…"
