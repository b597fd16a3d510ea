"""specdacular's fields in config.json, written in specdacular's own vocabulary so its brain can pick the task up.

specdacular routes a task by ``stage`` (discussion, research, planning, execution, complete) and, inside the
phase loop, by ``phases.current`` (an integer) and ``phases.current_status`` (pending, executing, executed,
completed); its routing table is in the README ("Existing specdacular projects"). A value outside those has
no row there, so specd writes only these, and picks the ones whose row names the step specd runs next:

- a step outside the phase loop: its stage (``review`` is part of specdacular's execution stage);
- a phase's plan step: ``planning`` when ROADMAP.md exists (that row plans the current phase whatever files
  exist, which a fix phase needs: revise wrote its PLAN.md), else ``execution``/``pending``;
- execute: ``executing``; review: ``executed``. Revise has no row of its own: specdacular's review keeps
  ``executed`` and goes on to revise itself, so specd keeps ``executed`` too;
- a decimal fix phase (02.1) is phase 2 to specdacular, whose fix phases are folders of the current phase.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.tasks.phases import Phase

STAGES = frozenset({"discussion", "research", "planning", "execution", "complete"})
# specd's step stages (pipeline `stage`, workflow frontmatter) that specdacular spells differently.
ALIASES = {"review": "execution"}
# A phase step's stage → specdacular's (stage, current_status) for "this step runs next".
IN_PHASE = {"planning": ("planning", "pending"), "execution": ("execution", "executing"),
            "review": ("execution", "executed")}
MAX_DIGITS = 18  # a phase number longer than this is not an integer any JSON reader keeps exactly


def phase_number(phase_id: str | None) -> int | None:
    """The integer specdacular calls a phase: ``02`` and ``02.1`` are both 2."""
    major = (phase_id or "").partition(".")[0]
    return int(major) if major.isdigit() and len(major) <= MAX_DIGITS else None


def total(known: list[Phase]) -> int:
    """How many phases were planned: the highest integer phase (fix phases do not add to it)."""
    return max((n for p in known if (n := phase_number(p.id)) is not None), default=0)


def completed(done: list[str]) -> int:
    """Integer phases finished; a fix phase is part of its parent."""
    return sum(1 for phase in done if "." not in phase)


def before(stage: str | None, phase: str | None, task_dir: Path) -> tuple[str | None, dict[str, Any]]:
    """(stage, phase fields) that route to a step of ``stage`` (in ``phase``) as the next one.

    An unknown stage leaves ``stage`` and ``current_status`` as they are (None / absent): a wrong value
    would send specdacular somewhere specd is not going.
    """
    if phase is None:
        mapped = ALIASES.get(stage or "", stage)
        return (mapped if mapped in STAGES else None), {}
    fields: dict[str, Any] = {}
    number = phase_number(phase)
    if number is not None:
        fields["current"] = number
    pair = IN_PHASE.get(stage or "")
    if pair is None:
        return None, fields
    new_stage, status = pair
    if new_stage == "planning" and not (task_dir / "ROADMAP.md").is_file():
        new_stage = "execution"  # "pending" without a PLAN.md routes to the phase's plan as well
    fields["current_status"] = status
    return new_stage, fields


def finished(known: list[Phase], done: list[str]) -> tuple[str, dict[str, Any]]:
    """A complete task: the last phase, completed."""
    last = total(known)
    return "complete", {"current": last or None, "current_status": "completed", "total": last,
                        "completed": completed(done)}
