"""An agent that nests folders a thousand deep (a loop of mkdir and open) crashes no specd command.

Python's recursion stops near 1,000 frames: every walk of a tree the agent writes (the step's artifacts, the jail's
machinery, the scratch sweep, the listing's watch, the hidden-source check) once recursed, and the step's close, the
next run's start and `specd status TASK` ended in a RecursionError traceback, for good."""

from __future__ import annotations

import sys
from pathlib import Path

from git_harness import GitProject

from specd.system import ownfiles
from specd.tasks.readmodel import inputs

NEST = r'''
import json, os, sys
step = os.environ["SPECD_STEP"]
sys.stdin.read()
if step == "execute":
    for top in (os.environ["SPECD_TASK_DIR"], "."):
        fd = os.open(top, os.O_RDONLY)
        for _ in range(1200):
            os.mkdir("d", dir_fd=fd)
            deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
        os.close(os.open("deep.md", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        os.close(fd)
open(os.environ["SPECD_RESULT"], "w").write(json.dumps({"outcome": "done", "summary": step + " done"}))
'''


def _unnest(top: Path) -> None:
    """Remove the nesting, deepest first: pytest's own clean-up of its folders recurses, and would fail on it."""
    deep = [top / "d"]
    while (deep[-1] / "d").is_dir():
        deep.append(deep[-1] / "d")
    for folder in reversed(deep):
        for child in folder.iterdir():
            if not child.is_dir():
                child.unlink()
        folder.rmdir()


def test_folders_a_thousand_deep_crash_nothing(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute", "review"))
    project.agent.write_text(NEST, encoding="utf-8")
    project.new("t")
    try:
        _runs(project)
    finally:
        for top in (project.root / ".specd/tasks/t", project.root):
            if (top / "d").is_dir():
                _unnest(top)


def _runs(project: GitProject) -> None:
    project.env["SPECD_STEPS"] = "1"  # the next run starts (lock, scratch sweep) with the folders there
    first = project.run("t")
    assert first.returncode == 0, first.stdout + first.stderr
    del project.env["SPECD_STEPS"]
    status = project.specd("status", "t")
    assert status.returncode == 0, status.stderr
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "COMPLETE" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert project.specd("status").returncode == 0
    assert sys.getrecursionlimit() < 1200  # what the nesting is deeper than


def test_the_walk_limit_is_one() -> None:
    assert inputs.DEEPEST == ownfiles.DEEPEST
