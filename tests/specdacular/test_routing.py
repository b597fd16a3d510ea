"""Each row of specdacular's routing: `status --json` reports the step, and `continue` runs it first."""

from __future__ import annotations

import json
from typing import Any

import pytest
from spd_kit import Project, roadmap

THREE = roadmap("t", [("1", "Parser", True), ("2", "Writer", True), ("3", "CLI", False)])
FOUR = roadmap("t", [("1", "A", True), ("2", "B", True), ("3", "C", True), ("4", "D", False), ("5", "E", False)])


def execution(current: Any, status: str | None, total: int = 3, **more: Any) -> dict[str, Any]:
    phases: dict[str, Any] = {"total": total, "completed": 2, "current": current}
    if status is not None:
        phases["current_status"] = status
    return {"stage": "execution", "phases": phases, **more}


# (id, task files, expected next (pipeline, step, phase) or None for complete)
ROWS: list[tuple[str, dict[str, Any], tuple[str, str, str | None] | None]] = [
    ("discussion-gray-areas", {"config": {"stage": "discussion"}, "gray": [True, False]}, ("main", "discuss", None)),
    ("discussion-no-gray-areas", {"config": {"stage": "discussion"}, "gray": [True, True]},
     ("main", "research", None)),
    ("research-missing", {"config": {"stage": "research"}, "gray": [True]}, ("main", "research", None)),
    ("research-present", {"config": {"stage": "research"}, "research": True}, ("main", "plan", None)),
    ("planning-no-roadmap", {"config": {"stage": "planning"}, "research": True}, ("main", "plan", None)),
    ("planning-roadmap", {"config": {"stage": "planning", "phases": {"total": 3}}, "research": True,
                          "roadmap_text": roadmap("t", [("1", "A", False), ("2", "B", False)])},
     ("phase-execution", "plan", "01")),
    ("pending-no-plan", {"config": execution(3, "pending"), "roadmap_text": THREE,
                         "plans": {"01": ["PLAN.md"], "02": ["PLAN.md"]}}, ("phase-execution", "plan", "03")),
    ("pending-with-plan", {"config": execution(3, "pending"), "roadmap_text": THREE,
                           "plans": {"03": ["PLAN.md"]}}, ("phase-execution", "execute", "03")),
    ("executing", {"config": execution(3, "executing"), "roadmap_text": THREE, "plans": {"03": ["PLAN.md"]}},
     ("phase-execution", "execute", "03")),
    ("executed", {"config": execution(3, "executed"), "roadmap_text": THREE, "plans": {"03": ["PLAN.md"]}},
     ("phase-execution", "review", "03")),
    ("completed-fix-phase", {"config": execution(4, "completed", total=5), "roadmap_text": FOUR,
                             "plans": {"04": ["PLAN.md"], "04.1": ["PLAN.md"]}},
     ("phase-execution", "execute", "04.1")),
    ("completed-next-phase", {"config": execution(4, "completed", total=5), "roadmap_text": FOUR,
                              "plans": {"04": ["PLAN.md"]}}, ("phase-execution", "plan", "05")),
    ("completed-last-phase", {"config": execution(3, "completed"), "roadmap_text": THREE,
                              "plans": {"03": ["PLAN.md"]}}, None),
    ("stage-complete", {"config": {"stage": "complete", "phases": {"total": 3, "completed": 3, "current": 3}},
                        "roadmap_text": THREE}, None),
]


@pytest.mark.parametrize(("files", "expected"), [(f, e) for _, f, e in ROWS], ids=[r[0] for r in ROWS])
def test_routing_row_reports_next_and_continue_runs_it_first(sp: Project, files: dict[str, Any],
                                                             expected: tuple[str, str, str | None] | None) -> None:
    sp.task("t", **files)
    status = sp.status("t")
    if expected is None:
        assert status["next"] is None
        assert status["status"] == "COMPLETE"
        result = sp.cont("t")
        assert result.returncode == 0, result.stderr
        assert "already complete" in result.stdout + result.stderr
        assert sp.log() == []
        return
    pipeline, step, phase = expected
    assert status["next"] == {"step": step, "pipeline": pipeline, "phase": phase}
    result = sp.cont("t")
    assert result.returncode in (0, 3), result.stderr  # 3: the agent's fake roadmap lists no phases
    assert sp.log()[0] == " ".join(p for p in (pipeline, step, phase) if p)


def test_a_reordered_pipeline_never_passes_over_an_unrun_step_of_a_fresh_task(sp: Project) -> None:
    """The README's tour: research swapped above discuss. A new task whose CONTEXT.md still lists gray areas
    is at discussion by its files, but research now comes first and has not run: the run starts there."""
    assert sp.specd("init", "--pipeline", "json").returncode == 0
    path = sp.root / ".specd" / "pipeline.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    main = data["pipelines"]["main"]
    assert [main[0]["name"], main[1]["name"]] == ["discuss", "research"]
    main[0], main[1] = main[1], main[0]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert sp.specd("new", "fresh", "--description", "Add CSV export").returncode == 0
    status = sp.status("fresh")
    assert status["next"] == {"step": "research", "pipeline": "main", "phase": None}
    assert [row["step"] for row in status["plan"]][:3] == ["research", "discuss", "plan"]
    assert status["progress"][0] == 1
    sp.cont("fresh")
    assert sp.log()[:2] == ["main research", "main discuss"]
