"""A run's workflow lookups (``resolve.Workflows``): kept between the asks of a step, never past a change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specd.errors import ConfigError
from specd.pipeline.resolve import Workflows
from specd.resources import builtin_dir
from specd.tasks.project import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / ".specd" / "workflows").mkdir(parents=True)
    return Project(tmp_path)


def test_a_workflow_added_to_the_project_shadows_the_built_in_one_at_the_next_ask(project: Project) -> None:
    paths = Workflows(project)
    assert paths.resolve("plan.md", where="w").path == (builtin_dir("workflows") / "plan.md").resolve()
    assert paths.resolve("plan.md", where="w").origin == "builtin"
    own = project.workflows_dir / "plan.md"
    own.write_text("# my plan\n")
    assert paths.resolve("plan.md", where="w").path == own.resolve()
    own.unlink()
    assert paths.resolve("plan.md", where="w").origin == "builtin"


def test_a_removed_workflow_is_an_error_at_the_next_ask_and_a_retargeted_link_is_followed(
        project: Project, tmp_path: Path) -> None:
    paths = Workflows(project)
    own = project.workflows_dir / "w.md"
    own.write_text("# w\n")
    assert paths.resolve("w.md", where="here").path == own.resolve()
    own.unlink()
    with pytest.raises(ConfigError, match="here: workflow file 'w.md' not found"):
        paths.resolve("w.md", where="here")
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# a\n")
    second.write_text("# b\n")
    own.symlink_to(first)
    assert paths.resolve("w.md", where="here").path == first
    link = project.workflows_dir / ".tmp-link"
    link.symlink_to(second)
    os.replace(link, own)  # retargeted as an editor or `ln -sfn` does: a new link renamed over the old
    assert paths.resolve("w.md", where="here").path == second


def test_a_workflows_folder_made_or_replaced_by_another_is_searched_again(project: Project, tmp_path: Path) -> None:
    paths = Workflows(project)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "plan.md").write_text("# shared plan\n")
    assert paths.resolve("plan.md", where="w").origin == "builtin"
    project.workflows_dir.rmdir()
    project.workflows_dir.symlink_to(shared)  # the project's folder is now another folder
    assert paths.resolve("plan.md", where="w").path == (shared / "plan.md").resolve()
