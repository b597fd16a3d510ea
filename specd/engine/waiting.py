"""What a stopped run waits for, and the one command that moves it on.

Every hint here is a complete command that works pasted as it is: the run
remembers its agent and mode, so no flag has to be retyped.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame, RunState

# Waits only an answer (approve, reject, skip) moves on; `continue` alone holds them.
HELD = ("gate", "outcome", "max_visits", "budget", "failure_cluster", "secret", "checks_failed")


def waiting(kind: str, frame: Frame, step: Step, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "step": step.name, "pipeline": frame.pipeline, "phase": frame.phase, **extra}


def held(state: RunState) -> bool:
    return state.status == "WAITING_FOR_HUMAN" and (state.waiting or {}).get("kind") in HELD


def release_if_gone(state: RunState, config: PipelineConfig) -> str | None:
    """A wait on a step the edited pipeline no longer has cannot be answered: it lapses, and says so."""
    wait = state.waiting or {}
    if not held(state) or wait.get("step") in [s.name for s in config.pipelines.get(str(wait.get("pipeline")), ())]:
        return None
    state.status, state.waiting = "IN_PROGRESS", None
    return f"the run waited at step {wait.get('step')!r} of {wait.get('pipeline')}, which the pipeline file no " \
           "longer has; that wait is over"


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


def what(state: RunState) -> str:
    """One line: what the run waits for, and where."""
    wait = state.waiting or {}
    where = f"{wait.get('step')!r}" + "".join(
        f" ({part})" for part in (f"pipeline {wait['pipeline']}" if wait.get("pipeline") not in (None, "main")
                                  else "", f"phase {wait['phase']}" if wait.get("phase") else "") if part)
    return {
        "gate": f"the gate before {where}",
        "outcome": f"a decision on the outcome {wait.get('outcome')!r} of {where}",
        "max_visits": f"a decision on {where}, which reached max_visits ({wait.get('limit')})",
        "budget": f"more budget before {where}",
        "failure_cluster": f"a decision on {where}, which failed the same way {wait.get('count')} times",
        "checks_failed": f"a decision on {where}, whose check `{wait.get('check')}` still failed after "
                         f"{wait.get('attempts')} attempts",
        "secret": f"a decision on files changed at {where} that hold secrets ("
                  + ", ".join(str(f.get("path")) for f in wait.get("files") or ()) + ")",
        "no_phases": f"phases to run: {where} runs once per phase, and ROADMAP.md lists none yet",
    }.get(str(wait.get("kind")), f"a person to look at {where}")


def answers_text(task: str) -> str:
    name = shlex.quote(task)
    return (f"`specd approve {name} [--note TEXT]`, `specd reject {name} --note TEXT`, `specd skip {name}`, "
            f"or `specd continue {name} --approve` to answer and go on in one command")
