"""What the first turn preloads: the task's files, capped, and a bootstrapped project summary."""

from __future__ import annotations

import json
from typing import Any

from specd.agents.anthropic import context


def test_phase_plan_is_preloaded_and_escapes_are_skipped(project: Any) -> None:
    plan = project.task_dir / "phases" / "phase-02" / "PLAN.md"
    plan.parent.mkdir(parents=True)
    plan.write_text("# Plan 02\n- task one\n")
    text = context.preload(project.request(phase="02", context_files=("DECISIONS.md", "../../../../outside/keep.txt",
                                                                      ".pipeline-state.json", "MISSING.md")))
    assert '<file path=".specd/tasks/t/phases/phase-02/PLAN.md">' in text
    assert '<file path=".specd/tasks/t/DECISIONS.md">' in text
    assert "untouched" not in text
    assert "IN_PROGRESS" not in text
    assert "MISSING.md" not in text


def test_long_changelog_keeps_the_newest_entries(project: Any) -> None:
    entries = "".join(f"### 2026-01-{day:02d} — entry {day}\n\n" + "detail " * 400 + "\n\n" for day in range(1, 30))
    (project.task_dir / "CHANGELOG.md").write_text("# Changelog: t\n\nNewest last.\n\n" + entries)
    text = context.preload(project.request(context_files=("CHANGELOG.md",)))
    assert "entry 29" in text
    assert "entry 1\n" not in text
    assert "older entries omitted" in text
    assert len(text) < context.FILE_CAP + 2000


def test_project_summary_is_bootstrapped_from_the_task_description(project: Any) -> None:
    (project.task_dir / "config.json").write_text(json.dumps({"description": "Add CSV export to the CLI"}))
    text = context.preload(project.request())
    summary = project.root / ".specd" / "PROJECT.md"
    assert "Add CSV export to the CLI" in summary.read_text()
    assert "Add CSV export to the CLI" in text
    summary.write_text("# Project\nA word counter.\n")
    assert "A word counter." in context.preload(project.request())


def test_system_prompt_is_the_same_for_every_step(project: Any) -> None:
    one = context.system_prompt(project.request(step="plan"))
    two = context.system_prompt(project.request(step="review", phase="01", mode="interactive"))
    assert one == two
    assert ".specd/tasks/t" in one


def test_a_project_summary_that_is_a_link_is_not_read_into_the_prompt(project: Any, tmp_path: Any) -> None:
    # Without the jail an agent can write .specd/PROJECT.md: a link to a file of yours would send it to the model.
    yours = tmp_path / "yours.txt"
    yours.write_text("aws_secret_access_key = k3y-of-yours\n")
    summary = project.root / ".specd" / "PROJECT.md"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.symlink_to(yours)
    text = context.preload(project.request())
    assert "k3y-of-yours" not in text
    assert "Bootstrapped by specd" in text
    assert summary.is_symlink()  # left as it was
    assert yours.read_text() == "aws_secret_access_key = k3y-of-yours\n"
