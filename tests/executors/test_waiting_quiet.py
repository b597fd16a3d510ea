"""`specd run` on worktree tasks that still wait for a person: each run asks again and stops, committing nothing.

Every `specd run --all` used to add `docs(<task>): run state WAITING_FOR_HUMAN` to the branch of every waiting
task, changing only the state's times: a script polling it grew each branch by a commit a poll.
"""

from __future__ import annotations

import time
from pathlib import Path

from executor_harness import Repo

TASKS = ("a", "b")


def test_run_on_waiting_worktree_tasks_adds_no_commit_and_an_answer_still_goes_on(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    for task in TASKS:
        repo.new(task)
    first = repo.specd("run", "--all", "--semi-auto", "--agent", repo.agent())
    assert first.returncode == 3, first.stdout + first.stderr
    tips = {task: repo.git("rev-parse", f"specd/{task}") for task in TASKS}
    for task in TASKS:
        assert repo.branch_commits(task)[0][0] == f"docs({task}): run state WAITING_FOR_HUMAN"
    main = repo.git("rev-parse", "main")
    for _ in range(2):
        time.sleep(1.1)  # a later second: a rewritten state would show it in its times
        again = repo.specd("run", "--all", "--semi-auto")
        assert again.returncode == 3, again.stdout + again.stderr
        assert "gate before 's2'" in again.stdout + again.stderr
    assert {task: repo.git("rev-parse", f"specd/{task}") for task in TASKS} == tips
    assert repo.git("rev-parse", "main") == main
    for task in TASKS:
        assert repo.git("status", "--porcelain", cwd=repo.tree(task)) == "", task
    # A real change still lands: the answer lets s2 run, on a's branch only.
    assert repo.specd("--project", str(repo.tree("a")), "approve", "a").returncode == 0
    done = repo.specd("run", "--all", "--semi-auto")
    assert done.returncode == 3, done.stdout + done.stderr  # b still waits
    subjects = [subject for subject, _ in repo.branch_commits("a")]
    assert subjects[:3] == ["docs(a): run state COMPLETE", "docs(a): s2 complete", "docs(a): starting s2"]
    assert repo.git("rev-parse", "specd/b") == tips["b"]
    for task in TASKS:
        assert repo.git("status", "--porcelain", cwd=repo.tree(task)) == "", task
