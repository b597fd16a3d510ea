"""Where a task stands before specd has run it: read from the files specdacular writes.

A task carried over from specdacular has no ``.pipeline-state.json``; its
position lives in config.json (``stage``, ``phases.current``,
``phases.current_status``, ``phases.total``), CONTEXT.md, RESEARCH.md,
ROADMAP.md and the phase folders. The routing is specdacular's own brain
routing; the first matching row wins:

- discussion: unchecked ``- [ ]`` under "Gray Areas Remaining" → discuss, else research
- research: no RESEARCH.md → research, else plan
- planning: no ROADMAP.md → plan, else the phase-level plan of the current phase
- execution, by the current phase's status: pending → phase plan (no PLAN.md yet) or execute;
  executing → execute; executed → review; completed → its first unfinished decimal fix phase,
  else the next phase while it is ≤ phases.total, else complete
- complete → complete

Real files are untidy, so every field is read leniently: a missing or
misspelt value falls back to what the files on disk say, never to an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame
from specd.tasks import markdown, phases
from specd.tasks.phases import Phase, sort_key
from specd.tasks.task import DEFAULT_STAGES

STAGES = {"discussion": "discussion", "discuss": "discussion", "questioning": "discussion",
          "research": "research", "researching": "research", "planning": "planning", "plan": "planning",
          "execution": "execution", "execute": "execution", "executing": "execution", "review": "execution",
          "complete": "complete", "completed": "complete", "done": "complete"}
# specdacular's phase statuses, plus the step names specd itself writes into current_status.
STATUSES = {"pending": "pending", "plan": "pending", "planning": "pending", "planned": "pending",
            "executing": "executing", "execute": "executing", "in_progress": "executing",
            "executed": "executed", "review": "executed", "reviewing": "executed", "revise": "revise",
            "completed": "completed", "complete": "completed", "done": "completed", "approved": "completed"}
ORDER = ("discussion", "research", "planning", "execution", "complete")  # specdacular's stages, in its order
GRAY_AREAS = re.compile(r"Gray Areas Remaining\b", re.IGNORECASE)
PHASE_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Derived:
    """A position: ``step`` of ``pipeline`` (in ``phase``), or ``complete``; ``done`` phases never re-run."""

    step: str | None
    pipeline: str
    phase: str | None
    complete: bool
    done: tuple[str, ...]
    reason: str  # which row of the routing matched, for notices


def derive(task_dir: Path, config_data: dict[str, Any], pipeline: PipelineConfig,
           known: list[Phase] | None = None) -> Derived:
    """The position; ``known`` is ``phases.discover(task_dir)`` when the caller has it already."""
    info = config_data.get("phases")
    info = info if isinstance(info, dict) else {}  # null, "" and [] all mean "no phase fields yet"
    known = phases.discover(task_dir) if known is None else known
    stage = _stage(config_data.get("stage"), task_dir, info)
    loop = phase_loop(pipeline)
    finished = tuple(p.id for p in known if p.done)
    if stage == "complete":
        return Derived(None, "main", None, True, tuple(p.id for p in known), "stage is complete")
    if stage == "discussion":
        open_items = gray_areas(task_dir)
        if open_items:
            return Derived("discuss", "main", None, False, finished, f"{open_items} gray areas remain in CONTEXT.md")
        return Derived("research", "main", None, False, finished, "discussion finished: no gray areas remain")
    if stage == "research":
        if (task_dir / "RESEARCH.md").is_file():
            return Derived("plan", "main", None, False, finished, "RESEARCH.md is written")
        return Derived("research", "main", None, False, finished, "no RESEARCH.md yet")
    if stage == "planning" and not (task_dir / "ROADMAP.md").is_file():
        return Derived("plan", "main", None, False, finished, "no ROADMAP.md yet")
    current = _phase_id(info.get("current")) or _first_open(known)
    if current is None and known:
        return Derived(None, "main", None, True, finished, "ROADMAP.md marks every phase done")
    if loop is None:
        first = pipeline.steps("main")[0].name
        return Derived(first, "main", None, False, finished, "the pipeline has no per-phase loop to resume in")
    if current is None:
        return Derived(loop[0], "main", None, False, finished, "the roadmap names no phase yet")
    # "planning" with a roadmap means the phase's own plan comes next, whatever files exist.
    status = "planning" if stage == "planning" else STATUSES.get(str(info.get("current_status")).lower(), "pending")
    return _execution(task_dir, loop[1], current, status, _total(info.get("total")), known)


def _execution(task_dir: Path, loop: str, current: str, status: str, total: str | None,
               known: list[Phase]) -> Derived:
    marked = {p.id for p in known if p.done}
    if status == "completed" or (status in ("pending", "planning") and current in marked):
        following = _after(current, total, known)
        if following is None:
            return Derived(None, loop, None, True, tuple(p.id for p in known), f"phase {current} was the last")
        current, status = following, ("planning" if status == "planning" else "pending")
    step = {"planning": "plan", "executing": "execute", "executed": "review", "revise": "revise"}.get(status)
    if step is None:
        step = "execute" if phases.has_plan(task_dir, current) else "plan"
    done = tuple(p.id for p in known if p.done or p.key < sort_key(current))
    return Derived(step, loop, current, False, done, f"phase {current} is {status}")


def _after(current: str, total: str | None, known: list[Phase]) -> str | None:
    """The first unfinished phase after ``current``: its decimal fix phases first, then the next one."""
    major = current.partition(".")[0]
    for phase in known:
        if phase.key <= sort_key(current) or phase.done:
            continue
        if phase.major == major or total is None or sort_key(phase.major) <= sort_key(total):
            return phase.id
        return None
    if total is not None and len(major) < 10 and len(total) < 10 and int(major) + 1 <= int(total):
        return phases.normalise(str(int(major) + 1))  # a phase the roadmap does not list yet
    return None


def phase_loop(pipeline: PipelineConfig) -> tuple[str, str] | None:
    """(main step name, pipeline name) of the step that runs a pipeline once per phase."""
    for step in pipeline.steps("main"):
        if step.pipeline and step.foreach == "phases":
            return step.name, step.pipeline
    return None


def gray_areas(task_dir: Path) -> int:
    """Open ``- [ ]`` items in CONTEXT.md's "Gray Areas Remaining" section (up to a heading as high or higher)."""
    return int(markdown.outline(task_dir / "CONTEXT.md", "gray-areas", _open_items) or 0)


def _open_items(blocks: list[markdown.Block]) -> int:
    level, count = 0, 0
    for block in blocks:
        if block.kind == "heading" and level and block.level <= level:
            break
        if block.kind == "heading" and GRAY_AREAS.match(block.text):
            level = block.level
        elif level and block.checked is False:
            count += 1
    return count


def seed_cursor(pipeline: PipelineConfig, position: Derived) -> list[Frame]:
    """The cursor stack that starts a run at ``position`` (the one place that builds it).

    Steps before the derived one count as finished in their iteration, so routing by name goes on from there.
    """
    main = [s.name for s in pipeline.steps("main")]
    if position.pipeline == "main" or position.pipeline not in pipeline.pipelines:
        at = position.step if position.step in main else main[0]
        return [_frame("main", main, _unrun_before(pipeline, at), None)]
    ref = next(s.name for s in pipeline.steps("main") if s.pipeline == position.pipeline)
    if (earlier := _unrun_before(pipeline, ref)) != ref:
        return [_frame("main", main, earlier, None)]
    inner = [s.name for s in pipeline.steps(position.pipeline)]
    step = position.step if position.step in inner else inner[0]
    return [_frame("main", main, ref, None), _frame(position.pipeline, inner, step, position.phase)]


def _unrun_before(pipeline: PipelineConfig, at: str) -> str:
    """The first main step before ``at`` that the files cannot have seen run, else ``at``.

    The files say how far a task got in specdacular's order (discussion, research, planning, execution). A
    pipeline edited to another order (research moved above discuss) must not pass over a step that order
    puts later: such a step, before the derived one here but of a later (or the same) stage, has not run.
    A step of no known stage counts as run only once the task is past its discussion."""
    steps = pipeline.steps("main")
    names = [s.name for s in steps]
    reached = _rank(steps[names.index(at)])
    for step in steps[:names.index(at)]:
        rank = _rank(step)
        if (rank if rank is not None else 0) >= (reached if reached is not None else 0):
            return step.name
    return at


def _rank(step: Step) -> int | None:
    if step.pipeline and step.foreach == "phases":
        return ORDER.index("execution")
    stage = STAGES.get(step.stage or DEFAULT_STAGES.get(step.name, ""), "")
    return ORDER.index(stage) if stage in ORDER else None


def _frame(pipeline: str, order: list[str], step: str, phase: str | None) -> Frame:
    return Frame(pipeline, step, phase, done=order[:order.index(step)])


def _stage(raw: Any, task_dir: Path, info: dict[str, Any]) -> str:
    stage = STAGES.get(str(raw).strip().lower()) if isinstance(raw, str) else None
    if stage:
        return stage
    # Very old tasks have no stage: the furthest document on disk tells how far they got.
    if info.get("current") is not None:
        return "execution"
    if (task_dir / "ROADMAP.md").is_file():
        return "planning"
    return "research" if (task_dir / "RESEARCH.md").is_file() else "discussion"


def _phase_id(raw: Any) -> str | None:
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, float):
        raw = int(raw) if raw.is_integer() else repr(raw)
    text = str(raw).strip()
    return phases.normalise(text) if PHASE_NUMBER.fullmatch(text) else None


def _total(raw: Any) -> str | None:
    text = str(raw).strip() if isinstance(raw, int | str) and not isinstance(raw, bool) else ""
    return (text.lstrip("0") or None) if text.isdigit() else None


def _first_open(known: list[Phase]) -> str | None:
    return next((p.id for p in known if not p.done), None)
