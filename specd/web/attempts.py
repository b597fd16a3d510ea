"""The attempts the run state's history has no row for: a step whose agent failed, was cut off, or runs now.

The history records a step once it ends with an outcome (and each round of its checks), so an agent that
exited non-zero, a run killed in the middle of a step, and the step running now leave only their journal
lines (``step_started``, then the ``run_finished`` that said why the run stopped) and their transcript. Those
are read back here so the page shows every attempt, failed ones included, with its reason and its transcript.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.agents import numbered
from specd.tasks.follow import label_of


def unfinished(events: list[dict[str, Any]], folder: Path, running: bool) -> list[dict[str, Any]]:
    """One row per ``step_started`` no ``step_finished`` closed: its outcome (``failed``, ``running``, the run's
    status, or ``interrupted``), the reason the journal gave, and its transcript relative to ``folder``."""
    found: list[dict[str, Any]] = []
    open_: dict[str, Any] | None = None
    run_id = ""
    seen: dict[tuple[str, str], int] = {}  # (run, step) → how many times the step started in that run
    for event in events:
        kind = event.get("kind")
        if kind == "run_started":
            if open_ is not None:
                found.append({**open_, "outcome": "interrupted", "reason": "the run stopped during this step"})
            open_, run_id = None, str(event.get("run_id") or "")
        elif kind == "step_started":
            if open_ is not None:  # a step's start with none ended: the earlier one was cut off
                found.append({**open_, "outcome": "interrupted", "reason": "the run stopped during this step"})
            step = str(event.get("step"))
            seen[(run_id, step)] = seen.get((run_id, step), 0) + 1
            open_ = {"step": step, "phase": event.get("phase") or "", "attempt": event.get("attempt") or 1,
                     "started_at": event.get("at"), "run_id": run_id, "nth": seen[(run_id, step)]}
        elif kind == "step_finished" and open_ is not None and str(event.get("step")) == open_["step"]:
            open_ = None
        elif kind == "run_finished" and open_ is not None:
            status = str(event.get("status") or "")
            found.append({**open_, "finished_at": event.get("at"), "reason": str(event.get("reason") or ""),
                          "outcome": "failed" if status in ("BLOCKED", "FAILED", "WAITING_FOR_HUMAN")
                          else status.lower() or "interrupted"})
            open_ = None
    if open_ is not None:
        found.append({**open_, "outcome": "running" if running else "interrupted",
                      "reason": "" if running else "the run stopped during this step"})
    for row in found:
        row["transcript"] = transcript(folder, row.pop("run_id"), row["step"], row.pop("nth"))
    return found


def transcript(folder: Path, run_id: str, step: str, nth: int) -> str:
    """The ``nth`` transcript the run made for ``step`` (its own, not a hook's or a check's), or ''."""
    runs = folder / "transcripts" / run_id
    if not run_id or not runs.is_dir():
        return ""
    mine = sorted((p for p in runs.iterdir() if numbered.number(p.name) is not None and label_of(p) == step),
                  key=numbered.key)
    return str(mine[nth - 1].relative_to(folder)) if 0 < nth <= len(mine) else ""
