"""`specd run` after a kill: a task whose state was saved COMPLETE before its last commit is committed by the next
run, though a finished task is not started again (``specd/executors/leftovers.py``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from executor_harness import Repo

KILL_AT_FINAL = """#!/bin/sh
# git, except that each of the first $KILLS `run state COMPLETE` commits kills the specd that makes it instead
case "$*" in
  *"run state COMPLETE"*)
    if [ "$(ls "$KILLED" | wc -l)" -lt "$KILLS" ]; then : > "$KILLED/$$"; kill -9 "$PPID"; sleep 5; exit 1; fi ;;
esac
exec "$REAL_GIT" "$@"
"""


def _killing_git(repo: Repo, kills: int) -> dict[str, str]:
    """The environment of a `specd` whose first ``kills`` final commits are each the end of the specd making it."""
    real = shutil.which("git")
    assert real is not None
    wrapper = repo.dir / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(KILL_AT_FINAL, encoding="utf-8")
    wrapper.chmod(0o755)
    (repo.dir / "killed").mkdir()
    return {"PATH": f"{wrapper.parent}{os.pathsep}{repo.env['PATH']}", "REAL_GIT": real,
            "KILLED": str(repo.dir / "killed"), "KILLS": str(kills)}


def test_a_task_killed_at_its_last_commit_under_run_gets_it_from_the_next_run(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"))
    repo.new("t")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "task")
    env = _killing_git(repo, 1)
    flags = ("--auto", "--agent", repo.agent())

    killed = repo.specd("run", "t", *flags, env=env)

    assert len(list((repo.dir / "killed").iterdir())) == 1, killed.stdout + killed.stderr
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


STOP_THEN_DIE = """
import os, signal, sys
from pathlib import Path
from specd.executors import leftovers
from specd.tasks.project import Project

stop = leftovers._stop

def stop_then_die(*args):  # a kill after the killed run's leftovers were stopped, before its commit is made
    found = stop(*args)
    os.kill(os.getpid(), signal.SIGKILL)

leftovers._stop = stop_then_die
leftovers.settle(Project(Path(sys.argv[1])), ["t"], lambda task, event: None)
"""


def test_a_run_killed_between_stopping_a_killed_runs_leftovers_and_its_commit_leaves_it_to_the_next(
        tmp_path: Path) -> None:
    """The task's run is killed at its last commit. The next `specd run` stops that run's leftovers, then is
    killed before it makes the commit: the run after it still makes it (``leftovers.settle`` holds the lock from
    the stop to the commit, so the task is still marked as left by a killed run)."""
    repo = Repo(tmp_path, steps=("s1",))
    repo.new("t")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "task")
    flags = ("--auto", "--agent", repo.agent())
    repo.specd("run", "t", *flags, env=_killing_git(repo, 1))
    tree = repo.tree("t")
    assert (tree / ".specd/tasks/t/.run.lock.owner").exists()  # the killed run's mark
    killed = subprocess.run([sys.executable, "-c", STOP_THEN_DIE, str(repo.root)], env={**os.environ, **repo.env},
                            capture_output=True, text=True, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert repo.git("status", "--porcelain", cwd=tree) != ""  # still not committed

    third = repo.specd("run", "--all", *flags)

    assert third.returncode == 0, third.stdout + third.stderr
    assert repo.git("log", "-1", "--format=%s", "specd/t") == "docs(t): run state COMPLETE\n"
    assert repo.git("status", "--porcelain", cwd=tree) == ""
    assert not (tree / ".specd/tasks/t/.run.lock.owner").exists()


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
