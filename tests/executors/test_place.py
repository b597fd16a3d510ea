"""The trees of the tasks a run starts at once, made side by side (specd/executors/place.py)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from executor_harness import Repo

from specd.errors import TaskError
from specd.executors import place, worktrees
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.task import create_task

TASKS = [f"t{i}" for i in range(6)]  # more than place.WORKERS: some worktrees are made while others are


def test_tasks_placed_side_by_side_each_get_their_own_worktree_and_one_refusal_stays_its_own(repo: Repo) -> None:
    project = Project(repo.root)
    for task in [*TASKS, "far"]:
        create_task(project, task, "")
    home.move(project, "far", home.Home("temporal", address="localhost:7233", workflow_id="wf-far"))
    before = repo.snapshot()

    placed = {p.task: p for p in place.place_all(project, [(task, ()) for task in ["far", *TASKS]])}

    assert sorted(placed) == sorted(["far", *TASKS])
    assert isinstance(placed["far"].error, TaskError)
    assert "runs on Temporal" in str(placed["far"].error)
    for task in TASKS:
        made = placed[task]
        assert made.error is None
        assert made.tree == repo.tree(task)
        assert not made.here
        assert repo.git("rev-parse", "--abbrev-ref", "HEAD", cwd=made.tree).strip() == f"specd/{task}"
        assert repo.branch_commits(task) == [(f"specd: task folder of {task}",
                                              [f".specd/tasks/{task}/{name}" for name in _files(repo.root, task)])]
        assert repo.git("status", "--porcelain", cwd=made.tree) == ""
    assert len(repo.git("worktree", "list", "--porcelain").split("\nworktree ")) == 1 + len(TASKS)
    assert repo.snapshot()[1:] == before[1:]  # the user's stash, HEAD and index

    again = place.place_all(project, [(task, ()) for task in TASKS])  # a resumed run finds them made
    assert sorted(p.tree for p in again) == [repo.tree(task) for task in TASKS]
    assert all(len(repo.branch_commits(task)) == 1 for task in TASKS)


def test_a_worktree_whose_folder_was_deleted_is_made_again_on_its_branch(repo: Repo) -> None:
    project = Project(repo.root)
    create_task(project, "a", "")
    first = place.place(project, "a", ())
    assert first.tree is not None
    repo.git("commit", "-q", "--allow-empty", "-m", "work of a", cwd=first.tree)
    shutil.rmtree(first.tree)  # git still lists it and the branch is there: `worktree add -b` is refused

    again = place.place(project, "a", ())

    assert again.error is None
    assert again.tree == first.tree
    assert [s for s, _ in repo.branch_commits("a")] == ["work of a", "specd: task folder of a"]


def _files(root: Path, task: str) -> list[str]:
    folder = root / ".specd" / "tasks" / task
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())



def test_git_worktree_add_runs_one_at_a_time(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `git worktree add` at once in one repository break each other (each reads the other's half-made
    record), so the trees are made side by side except for that call."""
    project, lock, inside, most = Project(repo.root), threading.Lock(), [0], [0]
    real = worktrees.git

    def watched(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        if args[:2] != ("worktree", "add"):
            return real(root, *args)
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.05)  # widens the window a second add would fall into; the answer never depends on it
            return real(root, *args)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(worktrees, "git", watched)
    for task in TASKS:
        create_task(project, task, "")
    placed = list(place.place_all(project, [(task, ()) for task in TASKS]))
    assert [p.error for p in placed] == [None] * len(TASKS)
    assert most == [1]


def test_a_worktree_made_but_not_checked_out_when_the_run_was_killed_is_checked_out_on_resume(repo: Repo) -> None:
    project = Project(repo.root)
    create_task(project, "a", "")
    tree = repo.tree("a")
    repo.git("worktree", "add", "--quiet", "--no-checkout", "-b", "specd/a", str(tree), "HEAD")  # then the kill
    assert not (tree / "README.md").exists()

    placed = place.place(project, "a", ())

    assert placed.error is None
    assert (tree / "README.md").read_text() == "# mine\n"
    assert repo.git("status", "--porcelain", cwd=tree) == ""
    assert [s for s, _ in repo.branch_commits("a")] == ["specd: task folder of a"]
