"""Human checkpoints: one row per answer or run-control decision, saying what was decided, where, and who.

Every row is made by ``record``, so every answer carries the same fields:
{at, step, [pipeline, phase, ...], answer, note, via, by}. ``via`` is where the answer came from (``VIAS``);
``by`` is who gave it, as that place knows them (a git identity, a login name), or "" when it cannot know.
Rows saved before specd kept these have neither field: they read as unknown, and are never rewritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.state import atomic
from specd.state.lock import CANCEL_MARK
from specd.state.model import RunState, now
from specd.system.ownfiles import read_regular

# terminal: an answer typed (or piped) at a gate; cli: `specd approve|reject|skip|cancel|retry|rerun` here;
# clone: sent from another clone (a Temporal signal); page: the dashboard; link: a notification's link;
# mcp: an MCP client (`specd mcp`). link is reserved: nothing answers that way yet.
VIAS = ("terminal", "cli", "clone", "page", "link", "mcp")
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Origin:
    """Where an answer came from, and who gave it."""

    via: str
    by: str = ""

    def __post_init__(self) -> None:
        if self.via not in VIAS:  # a programming error: every caller names its own place
            raise ValueError(f"unknown answer origin {self.via!r}; one of {', '.join(VIAS)}")


def record(state: RunState, origin: Origin, answer: str, step: str | None, note: str = "",
           **where: Any) -> dict[str, Any]:
    """Append the checkpoint row for ``answer`` at ``step``; ``where`` holds the row's other fields
    (pipeline, phase, what the run waited for, the status it had)."""
    row = {"at": now(), "step": step, **where, "answer": answer, "note": note, "via": origin.via, "by": origin.by}
    state.checkpoints.append(row)
    return row


def who(row: dict[str, Any]) -> str:
    """Who answered and from where, for people: "Ann <ann@example.com> via cli", "unknown via clone",
    or "unknown" for a row older than these fields."""
    via, by = row.get("via"), row.get("by")
    return (str(by) if by else UNKNOWN) + (f" via {via}" if via else "")


def line(row: dict[str, Any]) -> str:
    """One checkpoint as one line: when, where, the answer, who, and the note."""
    where = str(row.get("step") or "-") + (f" (phase {row['phase']})" if row.get("phase") else "")
    note = " ".join(str(row.get("note") or "").split())
    return f"{row.get('at') or '-'}  {where}  {row.get('answer') or '-'}  by {who(row)}" + (
        f"  note: {note[:120]}" if note else "")


def ask_cancel(task_dir: Path, origin: Origin) -> None:
    """Leave `specd cancel`'s mark for the run it stops, saying who cancels and from where."""
    # Replaced, never written through: the agent writes this folder, and could have left a link here.
    atomic.write_json(task_dir / CANCEL_MARK, {"via": origin.via, "by": origin.by}, durable=False)


def cancelled(state: RunState, task_dir: Path) -> str | None:
    """A run stopped by `specd cancel` (its mark, ``ask_cancel``): the cancel's row recorded as the cancel asked,
    and the reason the run ends with. The run's own last commit then holds the whole record, and the cancel has
    nothing left to write (so no second commit). None when no cancel asked."""
    try:
        asked = json.loads(read_regular(task_dir / CANCEL_MARK, 1 << 16) or b"{}")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        asked = {}
    asked = asked if isinstance(asked, dict) else {}
    via = asked.get("via") if asked.get("via") in VIAS else "cli"
    record(state, Origin(str(via), str(asked.get("by") or "")), "cancel",
           state.current.step if state.current else None, was=state.status)
    return cancel_reason(state.task)


def cancel_reason(task: str) -> str:
    return f"cancelled; `specd rerun {task} --from STEP` starts again from a step"
