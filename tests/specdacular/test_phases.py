"""Phase discovery: ROADMAP.md headings and task-list items plus the phase folders, with specdacular's done markers."""

from __future__ import annotations

from pathlib import Path

import pytest
from spd_kit import Project, roadmap

from specd.tasks import phases


def write(task_dir: Path, text: str, *folders: str) -> Path:
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "ROADMAP.md").write_text(text, encoding="utf-8")
    for folder in folders:
        (task_dir / folder).mkdir(parents=True)
    return task_dir


@pytest.mark.parametrize("marker", ["checkbox", "status"])
def test_done_markers_as_specdacular_writes_them(tmp_path: Path, marker: str) -> None:
    task = write(tmp_path / "t", roadmap("t", [("1", "A", True), ("2", "B", False), ("3", "C", True)], marker=marker))
    found = phases.discover(task)
    assert [(p.id, p.name, p.done) for p in found] == [("01", "A", True), ("02", "B", False), ("03", "C", True)]
    assert phases.next_phase(task, None) == found[1]
    assert phases.next_phase(task, "02") is None  # 03 is done: never run again


def test_status_line_belongs_to_its_own_phase_section_only(tmp_path: Path) -> None:
    text = ("## Phase Details\n\n### Phase 1: A\n\n**Status:** Planned\n\n### Phase 2: B\n\n- Status: done\n\n"
            "## Notes\n\nStatus: complete\n\n#### Phase 3 — C\n\nStatus: in progress\n")
    found = phases.discover(write(tmp_path / "t", text))
    assert [(p.id, p.done) for p in found] == [("01", False), ("02", True), ("03", False)]


def test_fenced_code_and_non_phase_lines_are_not_phases(tmp_path: Path) -> None:
    text = ("# Roadmap\n\n| Status | Complete |\n\n```\n### Phase 7: in a fence\n- [x] **Phase 8: fenced**\n```\n"
            "Phase 9: prose, not a heading\n\n### Phase 1: Real\n")
    assert [p.id for p in phases.discover(write(tmp_path / "t", text))] == ["01"]


def test_folders_under_phases_and_plans_join_the_roadmap_in_decimal_order(tmp_path: Path) -> None:
    task = write(tmp_path / "t", "### Phase 2: B\n### Phase 10: J\n",
                 "phases/phase-01", "plans/phase-02.1", "phases/phase-2.10", "phases/phase-02.9", "phases/notes")
    assert [p.id for p in phases.discover(task)] == ["01", "02", "02.1", "02.9", "02.10", "10"]
    assert phases.phase_dir(task, "02.1") == task / "plans" / "phase-02.1"
    assert phases.phase_dir(task, "02.10") == task / "phases" / "phase-2.10"
    assert phases.phase_dir(task, "03") == task / "phases" / "phase-03"


def test_plan_files_old_and_new_names(tmp_path: Path) -> None:
    task = write(tmp_path / "t", "", "plans/phase-01", "phases/phase-02", "phases/phase-03")
    (task / "plans/phase-01/01-PLAN.md").write_text("x", encoding="utf-8")
    (task / "phases/phase-02/PLAN.md").write_text("x", encoding="utf-8")
    (task / "phases/phase-03/CONTEXT.md").write_text("x", encoding="utf-8")
    assert [phases.has_plan(task, p) for p in ("01", "02", "03", "04")] == [True, True, False, False]


def test_a_five_thousand_digit_phase_number_is_read_as_digits(tmp_path: Path) -> None:
    huge = "1" + "0" * 4999
    task = write(tmp_path / "t", f"### Phase 2: B\n### Phase {huge}: Huge\n### Phase 0003.5: C\n- [x] Phase {huge}.7")
    found = phases.discover(task)
    assert [p.id for p in found] == ["02", "03.5", huge, f"{huge}.7"]
    assert found[-1].done
    assert phases.next_phase(task, "03.5") == found[2]
    assert phases.sort_key("99") < phases.sort_key("100") < phases.sort_key(huge)


def test_status_of_a_task_with_a_huge_phase_number_answers(sp: Project) -> None:
    sp.task("t", {"stage": "execution", "phases": {"current": "9" * 5000, "current_status": "executing"}},
            roadmap_text="### Phase " + "9" * 5000 + ": Big\n")
    assert sp.status("t")["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "9" * 5000}
