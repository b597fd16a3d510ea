"""Reading a step's rounds of checks back from the history: for `status`, the page and the engine.

Pure reads of the run state, kept below the engine (engine/checks.py runs the checks, engine/check_rounds.py
words a failed round for the next prompt), so that listing a task's state loads nothing that runs commands.
"""

from __future__ import annotations

from typing import Any

from specd.state.model import Current, RunState

KIND = "checks"  # the history rows' kind, and the name of the stage that writes them


def last_round(state: RunState, cur: Current) -> dict[str, Any] | None:
    """The round of checks recorded after the step's latest agent run in this visit, if there is one.

    Only the rows written since the visit began are read (they finished after it started), so a long run's
    history is not walked at every step."""
    for row in reversed(state.history):
        if str(row.get("finished_at") or "") < cur.started_at:
            return None
        if (row.get("step"), row.get("pipeline"), row.get("phase"), row.get("visit")) != (
                cur.step, cur.pipeline, cur.phase, cur.visit):
            continue
        if row.get("kind") == KIND:
            found: dict[str, Any] = row
            return found
        if row.get("kind") == "step":
            return None
    return None


def view(state: RunState) -> dict[str, Any] | None:
    """The latest round of checks for `status`: of the current step while one runs or waits, else the run's last
    (None when there was none): attempt n of N, and each check's result."""
    cur = state.current
    row = last_round(state, cur) if cur is not None else None
    if row is None and cur is None:
        row = next((r for r in reversed(state.history) if r.get("kind") == KIND), None)
    if row is None:
        return None
    return {"step": row.get("step"), "pipeline": row.get("pipeline"), "phase": row.get("phase"),
            "attempt": row.get("round"), "of": row.get("of"), "outcome": row.get("outcome"),
            "summary": row.get("summary"), "checks": [{k: c.get(k) for k in ("run", "ok", "status", "timed_out",
                                                                                  "seconds")}
                                                      for c in row.get("checks") or ()]}


def failing(row: dict[str, Any]) -> dict[str, Any]:
    """The check that failed in ``row`` (a round stops at its first failure), or {}."""
    found: dict[str, Any] = next((c for c in row.get("checks") or () if not c.get("ok")), {})
    return found


def why(result: dict[str, Any]) -> str:
    if result.get("timed_out"):
        return f"timed out after {float(result.get('timeout') or 0):g} s"
    return f"exited with status {result.get('status')}"
