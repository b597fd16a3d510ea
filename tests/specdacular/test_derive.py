"""`derive` and `seed_cursor` in-process: the corners the CLI tests do not reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spd_kit import roadmap

from specd.pipeline import load_pipeline
from specd.pipeline.model import PipelineConfig
from specd.state.model import Frame
from specd.tasks.derive import Derived, derive, gray_areas, seed_cursor
from specd.tasks.project import Project


@pytest.fixture
def default(tmp_path: Path) -> PipelineConfig:
    (tmp_path / ".specd").mkdir()
    return load_pipeline(Project(tmp_path))


def task(tmp_path: Path, text: str = "", **plans: list[str]) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    if text:
        (folder / "ROADMAP.md").write_text(text, encoding="utf-8")
    for phase, files in plans.items():
        (folder / "phases" / f"phase-{phase.replace('_', '.')}").mkdir(parents=True)
        for name in files:
            (folder / "phases" / f"phase-{phase.replace('_', '.')}" / name).write_text("x", encoding="utf-8")
    return folder


def where(d: Derived) -> tuple[str | None, str, str | None, bool]:
    return d.step, d.pipeline, d.phase, d.complete


def execution(current: Any, status: Any, total: Any = 3) -> dict[str, Any]:
    return {"stage": "execution", "phases": {"current": current, "current_status": status, "total": total}}


def test_every_phase_marked_done_is_complete(tmp_path: Path, default: PipelineConfig) -> None:
    folder = task(tmp_path, roadmap("t", [("1", "A", True), ("2", "B", True)]))
    assert where(derive(folder, {"stage": "execution", "phases": None}, default)) == (None, "main", None, True)


def test_a_roadmap_without_phases_points_at_the_phase_loop(tmp_path: Path, default: PipelineConfig) -> None:
    folder = task(tmp_path, "# Roadmap\n\nNothing yet.\n")
    position = derive(folder, {"stage": "planning"}, default)
    assert where(position) == ("phases", "main", None, False)
    assert seed_cursor(default, position) == [Frame("main", step="phases", done=["discuss", "research", "plan"])]


@pytest.mark.parametrize(("current", "status", "expected"), [
    ("04", "executing", ("execute", "04")),
    (4.0, "EXECUTED", ("review", "04")),
    ("4.1", "execute", ("execute", "04.1")),
    (2, "revise", ("revise", "02")),
    (2, "pending", ("plan", "03")),  # phase 02 is marked done: never again
    (2, None, ("plan", "03")),
    (True, "executing", ("execute", "03")),  # nonsense current: the first open phase
    (3, "approved", (None, None)),  # the last phase, and phases.total says 3
])
def test_execution_statuses(tmp_path: Path, default: PipelineConfig, current: Any, status: Any,
                            expected: tuple[str | None, str | None]) -> None:
    folder = task(tmp_path, roadmap("t", [("1", "A", True), ("2", "B", True), ("3", "C", False)]),
                  **{"04_1": ["PLAN.md"]})
    position = derive(folder, execution(current, status), default)
    assert (position.step, position.phase) == expected
    assert position.complete is (expected[0] is None)


def test_next_phase_stops_at_total_even_when_the_roadmap_lists_more(tmp_path: Path, default: PipelineConfig) -> None:
    folder = task(tmp_path, roadmap("t", [("1", "A", False), ("2", "B", False), ("3", "C", False)]))
    assert derive(folder, execution(2, "completed", total="2"), default).complete
    assert where(derive(folder, execution(2, "completed", total="x"), default)) == (
        "plan", "phase-execution", "03", False)


def test_done_phases_are_those_before_the_position_and_those_marked(tmp_path: Path, default: PipelineConfig) -> None:
    folder = task(tmp_path, roadmap("t", [("1", "A", False), ("2", "B", False), ("3", "C", False),
                                          ("4", "D", True)]), **{"02_1": []})
    position = derive(folder, execution(3, "executing", total=4), default)
    assert position.done == ("01", "02", "02.1", "04")
    assert seed_cursor(default, position) == [Frame("main", step="phases", done=["discuss", "research", "plan"]),
                                                Frame("phase-execution", "execute", "03", done=["plan"])]


def test_a_step_missing_from_a_custom_pipeline_starts_at_its_top(tmp_path: Path) -> None:
    (tmp_path / ".specd").mkdir()
    (tmp_path / ".specd/pipeline.json").write_text(json.dumps({"schema_version": "1.0", "pipelines": {
        "main": [{"name": "build", "workflow": "execute.md"},
                 {"name": "loop", "pipeline": "per", "foreach": "phases"}],
        "per": [{"name": "build", "workflow": "execute.md"}]}}), encoding="utf-8")
    config = load_pipeline(Project(tmp_path))
    assert seed_cursor(config, Derived("research", "main", None, False, (), "")) == [Frame("main", "build")]
    assert seed_cursor(config, Derived("review", "per", "02", False, (), "")) == [
        Frame("main", "loop", done=["build"]), Frame("per", "build", "02")]


def test_gray_areas_counts_only_unchecked_items_in_that_section(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    assert gray_areas(folder) == 0  # no CONTEXT.md
    (folder / "CONTEXT.md").write_text(
        "# Context\n\n- [ ] before\n\n## Gray Areas Remaining\n\n- [ ] one\n- [x] done\n  * [ ] nested two\n"
        "### Sub heading\n- [ ] three\n\n## Resolved\n\n- [ ] after\n", encoding="utf-8")
    assert gray_areas(folder) == 3
