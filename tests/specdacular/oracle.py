"""specdacular's brain routing, strictly as specdacular documents it: the test oracle for what specd writes.

The table is the one the drop-in follows (README "Existing specdacular projects", from specdacular's
STATE-MACHINE.md); specd's own reading of it (specd/tasks/derive.py) is lenient on purpose and so cannot
judge what specd writes. This one knows only specdacular's values, and a state with any other value has no
row (``NoRow``), as in specdacular:

- stage: discussion, research, planning, execution, complete;
- phases.current: an integer (or absent before the phase loop); phases.total: an integer;
- phases.current_status: pending, executing, executed, completed (or absent, read as pending).

First matching row wins:

| state | next |
|---|---|
| discussion, an unchecked ``- [ ]`` under "Gray Areas Remaining" in CONTEXT.md | discuss (main) |
| discussion, none | research (main) |
| research, no RESEARCH.md / RESEARCH.md | research / plan (main) |
| planning, no ROADMAP.md | plan (main) |
| planning, ROADMAP.md | plan of the current phase (phase-execution) |
| execution, pending | the current phase's plan, or its execute when phases/phase-NN/PLAN.md exists |
| execution, executing / executed | execute / review |
| execution, completed | an unfinished fix phase NN.M: execute; else the next plan up to total; else complete |
| complete | complete |
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGES = ("discussion", "research", "planning", "execution", "complete")
STATUSES = ("pending", "executing", "executed", "completed")
LOOP = "phase-execution"


class NoRow(AssertionError):
    """specdacular's routing has no row for this state: it could not pick the task up."""


@dataclass(frozen=True)
class Route:
    step: str | None  # None: the task is complete
    pipeline: str
    phase: int | None


def route(task_dir: Path) -> Route:
    config = json.loads((task_dir / "config.json").read_text(encoding="utf-8"))
    stage = config.get("stage")
    if stage not in STAGES:
        raise NoRow(f"stage {stage!r} is none of {STAGES}")
    phases = config.get("phases") or {}
    if not isinstance(phases, dict):
        raise NoRow(f"phases is {phases!r}, not an object")
    current = _integer(phases, "current")
    total = _integer(phases, "total")
    status = phases.get("current_status")
    if status is not None and status not in STATUSES:
        raise NoRow(f"phases.current_status {status!r} is none of {STATUSES}")
    if stage == "complete":
        return Route(None, "main", None)
    if stage == "discussion":
        return Route("discuss" if _gray_areas(task_dir) else "research", "main", None)
    if stage == "research":
        return Route("plan" if (task_dir / "RESEARCH.md").is_file() else "research", "main", None)
    if stage == "planning":
        if not (task_dir / "ROADMAP.md").is_file():
            return Route("plan", "main", None)
        return Route("plan", LOOP, current or 1)
    number = current or 1
    if status in (None, "pending"):
        planned = (task_dir / "phases" / f"phase-{number:02d}" / "PLAN.md").is_file()
        return Route("execute" if planned else "plan", LOOP, number)
    if status == "executing":
        return Route("execute", LOOP, number)
    if status == "executed":
        return Route("review", LOOP, number)
    if _open_fix_phases(task_dir, number):
        return Route("execute", LOOP, number)
    if total is None or number >= total:
        return Route(None, "main", None)
    return Route("plan", LOOP, number + 1)


def _integer(phases: dict[str, Any], key: str) -> int | None:
    value = phases.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise NoRow(f"phases.{key} is {value!r}, not an integer")
    return value


def _gray_areas(task_dir: Path) -> int:
    """Unchecked items in the "Gray Areas Remaining" section (up to the next heading as high or higher)."""
    count, level = 0, 0
    for line in (task_dir / "CONTEXT.md").read_text(encoding="utf-8").splitlines():
        heading = re.match(r"(#+)\s+(.*)", line)
        if heading:
            if level and len(heading.group(1)) <= level:
                break
            if heading.group(2).strip().lower().startswith("gray areas remaining"):
                level = len(heading.group(1))
        elif level and re.match(r"\s*- \[ \]", line):
            count += 1
    return count


def _open_fix_phases(task_dir: Path, number: int) -> list[str]:
    """Fix phase folders of phase ``number`` whose ROADMAP.md item is not ticked."""
    roadmap = task_dir / "ROADMAP.md"
    text = roadmap.read_text(encoding="utf-8") if roadmap.is_file() else ""
    found = []
    for folder in sorted((task_dir / "phases").glob(f"phase-{number:02d}.*")):
        minor = folder.name.partition(".")[2]
        if not re.search(rf"- \[[xX]\] (\*\*)?Phase {number}\.{minor}\b", text):
            found.append(folder.name)
    return found
