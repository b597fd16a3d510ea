"""`specd run` after a kill: a task whose state was saved COMPLETE before its last commit is committed by the next
run, though a finished task is not started again (``specd/executors/leftovers.py``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from executor_harness import Repo

KILL_AT_FINAL = """#!/bin/sh
# git, except that the first `run state COMPLETE` commit kills the specd that makes it (the task's run) instead
case "$*" in
  *"run state COMPLETE"*) if [ ! -e "$KILLED_MARK" ]; then : > "$KILLED_MARK"; kill -9 "$PPID"; sleep 5; exit 1; fi ;;
esac
exec "$REAL_GIT" "$@"
"""


def test_a_task_killed_at_its_last_commit_under_run_gets_it_from_the_next_run(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"))
    repo.new("t")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "task")
    real = shutil.which("git")
    assert real is not None
    wrapper = repo.dir / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(KILL_AT_FINAL, encoding="utf-8")
    wrapper.chmod(0o755)
    env = {"PATH": f"{wrapper.parent}{os.pathsep}{repo.env['PATH']}", "REAL_GIT": real,
           "KILLED_MARK": str(repo.dir / "killed")}
    flags = ("--auto", "--agent", repo.agent())

    killed = repo.specd("run", "t", *flags, env=env)

    assert (repo.dir / "killed").exists(), killed.stdout + killed.stderr
    tree = repo.tree("t")
    state = json.loads((tree / ".specd/tasks/t/.pipeline-state.json").read_text())
    assert state["status"] == "COMPLETE"  # saved, and its last commit never made
    assert repo.git("log", "-1", "--format=%s", "specd/t") != "docs(t): run state COMPLETE\n"
    assert repo.git("status", "--porcelain", cwd=tree) != ""

    again = repo.specd("run", "--all", *flags, env=env)

    assert again.returncode == 0, again.stdout + again.stderr
    assert repo.git("log", "-1", "--format=%s", "specd/t") == "docs(t): run state COMPLETE\n"
    assert repo.git("status", "--porcelain", cwd=tree) == ""
    assert not (tree / ".specd/tasks/t/.run.lock.owner").exists()  # the killed run's record is settled
    made = repo.git("rev-parse", "specd/t")
    assert repo.specd("run", "--all", *flags, env=env).returncode == 0
    assert repo.git("rev-parse", "specd/t") == made  # nothing more to do


def test_a_task_killed_between_its_home_record_and_its_worktree_is_made_again(tmp_path: Path) -> None:
    # What a kill between `specd run` recording the task's home and `git worktree add` leaves: the record alone.
    repo = Repo(tmp_path, steps=("s1",))
    repo.new("t")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "task")
    record = {"kind": "worktree", "path": ".specd/worktrees/t", "branch": "specd/t"}
    repo.write(".specd/homes/t.json", json.dumps(record))

    done = repo.specd("run", "--all", "--auto", "--agent", repo.agent())

    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((repo.tree("t") / ".specd/tasks/t/.pipeline-state.json").read_text())["status"] == "COMPLETE"
    assert repo.git("log", "-1", "--format=%s", "specd/t") == "docs(t): run state COMPLETE\n"
