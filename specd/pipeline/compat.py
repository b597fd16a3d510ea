"""Reading a pipeline.json written for specdacular the way specdacular's brain runs it.

specdacular's file references ``phase-execution`` without ``foreach`` and gives
its execute/review/revise steps no ``outcomes``: its brain loops over the
phases itself and routes a review by the human's answer (approve → next phase,
revise → revise, then the fix phase as the next phase). specd makes both explicit, using its built-in
pipeline's routing for the steps of the same name, and says so in a notice.
A file that writes ``foreach`` is taken as written.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from specd.pipeline.limits import json_path
from specd.pipeline.model import TARGETS
from specd.resources import builtin

PHASE_PIPELINE = "phase-execution"


@cache
def _builtin_outcomes() -> dict[str, dict[str, str]]:
    data = json.loads(builtin("pipelines", "default.json").read_text(encoding="utf-8"))
    return {s["name"]: s["outcomes"] for s in data["pipelines"][PHASE_PIPELINE] if s.get("outcomes")}


def specdacular_phase_loop(path: Path, data: dict[str, Any]) -> list[str]:
    """Fill in what specdacular leaves implicit (``data`` is changed in place); return the notices."""
    notes: list[str] = []
    for name, steps in data["pipelines"].items():
        for i, step in enumerate(steps):
            if step.get("pipeline") != PHASE_PIPELINE or "foreach" in step:
                continue
            step["foreach"] = "phases"
            routed = _route(data["pipelines"][PHASE_PIPELINE])
            extra = f"; its steps {', '.join(routed)} route outcomes as the built-in pipeline does" if routed else ""
            notes.append(f"{path}: {json_path(['pipelines', name, i])}: the reference to '{PHASE_PIPELINE}' has no "
                         f"foreach, so it runs once per phase as in specdacular{extra} (write \"foreach\": "
                         "\"phases\" and the steps' outcomes to say so explicitly)")
    return notes


def _route(steps: list[dict[str, Any]]) -> list[str]:
    names = {s["name"] for s in steps}
    routed = []
    for step in steps:
        outcomes = _builtin_outcomes().get(step["name"])
        if "outcomes" in step or not outcomes:
            continue
        if all(target in TARGETS or target in names for target in outcomes.values()):
            step["outcomes"] = dict(outcomes)
            routed.append(step["name"])
    return routed
