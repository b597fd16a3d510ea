"""A step open when specd was killed: re-run, its commit holds the work of both attempts; finished, it is committed
alone under its own name by the next run, never in the next step's commit (``specd/git/recovery.py``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

from git_harness import RUN_TIMEOUT, GitProject
from test_recovery import wait_for

# specd, dying (as kill -9 would: no cleanup, no commit) the moment plan's step_finished reaches git: after
# plan's history row is saved, before its changes are closed and committed.
DIE_AT_PLAN_FINISHED = """
import os, sys
from specd.git import recorder
original = recorder.GitRecorder.__call__
def call(self, event):
    if event.kind == "step_finished" and event.data.get("step") == "plan":
        os._exit(137)
    original(self, event)
recorder.GitRecorder.__call__ = call
from specd.cli import main
sys.exit(main(sys.argv[1:]))
"""

KILL_AT_PLAN_COMMIT = """#!/bin/sh
# git, except that the first `plan complete` commit kills specd (its parent) instead: after specd's `git add`
case "$*" in
  *"plan complete"*) if [ ! -e "$KILLED_MARK" ]; then : > "$KILLED_MARK"; kill -9 "$PPID"; sleep 5; exit 1; fi ;;
esac
exec "$REAL_GIT" "$@"
"""


def test_a_step_finished_but_not_committed_at_a_kill_is_committed_alone_under_its_name(gp: GitProject) -> None:
    gp.rules({"plan": {"write": {"src/plan.py": "print('plan')\n"}}})
    gp.new("t")
    died = subprocess.run([sys.executable, "-c", DIE_AT_PLAN_FINISHED, "continue", "t", "--auto", "--agent",
                           gp.agent_spec()], cwd=gp.root, env=gp.env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT, check=False)
    assert died.returncode == 137, died.stderr
    assert not any("src/plan.py" in files for _, files in gp.commits())  # the kill landed in the window

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    commits = dict(gp.commits())
    assert commits["docs(t): plan complete (recovered after an interrupted run)"] == ["src/plan.py"]
    assert "src/plan.py" not in commits["docs(t): starting execute"]
    assert [s for s, _ in gp.commits()].count("docs(t): plan complete (recovered after an interrupted run)") == 1
    assert not [s for s, _ in gp.commits() if s.startswith("docs(t): plan complete") and "recovered" not in s]
    assert gp.commits()[-1][0] == "docs(t): run state COMPLETE"
    assert gp.git("status", "--porcelain") == ""


def test_a_re_run_step_killed_between_add_and_commit_is_recovered_with_the_first_attempts_work(
        gp: GitProject) -> None:
    # Attempt 1 writes the file and is killed mid-step; attempt 2 writes the same bytes (no change of its own)
    # and is killed after `git add`: the file is still plan's work, journaled as such, and committed as plan's.
    gp.rules({"plan": {"write": {"src/plan.py": "print('plan')\n"}, "hold": True}})
    gp.new("t")
    proc = gp.start("t")
    wait_for(lambda: (gp.dir / "held").exists() or proc.poll() is not None, "plan's agent", timeout=RUN_TIMEOUT)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=RUN_TIMEOUT)
    real = shutil.which("git")
    assert real is not None
    wrapper = gp.dir / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(KILL_AT_PLAN_COMMIT, encoding="utf-8")
    wrapper.chmod(0o755)
    gp.env.update(PATH=f"{wrapper.parent}{os.pathsep}{gp.env['PATH']}", REAL_GIT=real,
                  KILLED_MARK=str(gp.dir / "killed"))
    gp.rules({"plan": {"write": {"src/plan.py": "print('plan')\n"}}})
    killed = gp.run("t")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert "src/plan.py" in gp.git("diff", "--cached", "--name-only")  # the kill landed after `git add`

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    commits = dict(gp.commits())
    assert "src/plan.py" in commits["docs(t): plan complete (recovered after an interrupted run)"]
    assert gp.git("show", "HEAD:src/plan.py") == "print('plan')\n"
    assert gp.git("status", "--porcelain") == ""
    assert gp.commits()[-1][0] == "docs(t): run state COMPLETE"
