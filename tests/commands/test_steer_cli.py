"""`pipeline validate` reads workflow frontmatter; shell completion of task and step names; new commands' help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def doc(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": "1.0", "pipelines": {"main": list(steps)}}


def test_validate_reports_bad_frontmatter_yaml_with_file_and_line(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"name": "a", "workflow": "good.md"}, {"name": "b", "workflow": "bad.md"}))
    project.file(".specd/workflows/good.md", "---\ndescription: fine\n---\n\n# Good\n")
    bad = project.file(".specd/workflows/bad.md", "---\ndescription: broken\nstage: : plan\n---\n\n# Bad\n")

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2
    assert f"{bad}:3: invalid YAML frontmatter" in result.err  # line 3 holds the stray ':'

    assert "good.md" not in result.err
    assert "Traceback" not in result.err


def test_validate_reads_hook_workflows_too(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"name": "a", "workflow": "good.md"}))
    project.file(".specd/workflows/good.md", "---\ndescription: fine\n---\n\n# Good\n")
    hook = project.file(".specd/hooks/pre-a.md", "---\noutcomes: {\n---\n\nCheck.\n")

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2
    assert str(hook) in result.err


def test_validate_counts_the_workflow_files_it_read(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"name": "a", "workflow": "good.md"}, {"name": "b", "workflow": "good.md"}))
    project.file(".specd/workflows/good.md", "---\ndescription: fine\n---\n\n# Good\n")

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 0, result.err
    assert "1 workflow files read" in result.out


def complete(root: Path, line: str) -> list[str]:
    """What bash completion offers for ``line`` (click's bash_complete protocol: `type,value` lines)."""
    words = line.split(" ")
    env = {**os.environ, "_SPECD_COMPLETE": "bash_complete", "COMP_WORDS": line,
           "COMP_CWORD": str(len(words) - 1)}
    result = subprocess.run([sys.executable, "-m", "specd"], cwd=root, env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return [row.split(",", 1)[1] for row in result.stdout.splitlines() if "," in row]


@pytest.mark.parametrize("command", ["continue", "status", "cancel", "logs"])
def test_task_names_complete(project: Any, command: str) -> None:
    for name in ("add-export", "add-import", "fix-bug"):
        project.file(f".specd/tasks/{name}/config.json", "{}")

    assert complete(project.root, f"specd {command} add-") == ["add-export", "add-import"]


@pytest.mark.parametrize("command", ["approve", "reject", "skip"])
def test_answer_verbs_complete_only_the_tasks_that_wait(project: Any, command: str) -> None:
    from specd.state.model import RunState
    from specd.state.store import StateStore

    for name, status in (("add-export", "WAITING_FOR_HUMAN"), ("add-import", "COMPLETE"), ("add-more", None)):
        folder = project.file(f".specd/tasks/{name}/config.json", "{}").parent
        if status:
            wait = {"kind": "gate", "step": "a", "pipeline": "main", "phase": None} if status != "COMPLETE" else None
            StateStore(folder, name).save(RunState(task=name, status=status, waiting=wait))

    assert complete(project.root, f"specd {command} add-") == ["add-export"]
    assert complete(project.root, "specd status add-") == ["add-export", "add-import", "add-more"]


def test_step_names_complete_for_rerun_from(project: Any) -> None:
    project.pipeline(doc({"name": "discuss", "workflow": "w.md"}, {"name": "design", "workflow": "w.md"},
                         {"name": "plan", "workflow": "w.md"}))
    project.file(".specd/workflows/w.md")

    assert complete(project.root, "specd rerun t --from d") == ["discuss", "design"]


@pytest.mark.parametrize("command", ["approve", "reject", "skip", "cancel", "retry", "rerun", "logs"])
def test_new_commands_are_listed_and_explain_themselves(run_cli: Any, command: str) -> None:
    listing = run_cli("--help")
    own = run_cli(command, "--help")

    assert command in listing.out
    assert own.code == 0
    assert "TASK" in own.out
