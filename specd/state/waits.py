"""What a stopped run waits for and the one command that moves it on, read from the run state alone.

Below the engine, so that `status` and the listing's index word a run's hint without loading the loop; the
engine's ``waiting`` module, which records the waits, uses these same rules. Every hint is a complete command
that works pasted as it is: the run remembers its agent and mode, so no flag has to be retyped.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from specd.state.model import RunState

# Waits only an answer (approve, reject, skip) moves on; `continue` alone holds them.
HELD = ("gate", "outcome", "max_visits", "budget", "failure_cluster", "secret", "hidden",
        "checks_failed")


def held(state: RunState) -> bool:
    return state.status == "WAITING_FOR_HUMAN" and (state.waiting or {}).get("kind") in HELD


def hint(task: str, state: RunState) -> str:
    """The command to run next; empty when there is nothing to do."""
    name = shlex.quote(task)
    wait = state.waiting or {}
    if state.status == "COMPLETE":
        return ""
    if state.status == "FAILED":
        return f"specd retry {name}"
    if state.status == "CANCELLED":
        return f"specd rerun {name} --from STEP"
    if held(state) and wait.get("kind") == "budget" and wait.get("max_cost_usd") is not None:
        return f"specd continue {name} --max-cost {raised_budget(wait):.2f}"
    if held(state):
        return f"specd continue {name} --approve"
    return f"specd continue {name}"


def raised_budget(wait: dict[str, Any]) -> float:
    """A --max-cost that lets the run go on: double the old one, and never less than what is spent plus the
    call the budget refused (rounded up to a cent), or a hint followed to the letter would hold again."""
    spent, limit = float(wait.get("spent_usd") or 0), float(wait["max_cost_usd"])
    needed = math.ceil((spent + float(wait.get("next_call_usd") or 0)) * 100 + 1e-9) / 100
    return max(max(limit, spent) * 2, needed) or 1.0
