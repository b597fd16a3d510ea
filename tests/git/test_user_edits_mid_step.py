"""You edit the pipeline (or a workflow, or git's config) while a jailed step runs: the edit is yours, kept, and
the run goes on with it. Found by hand: the machinery check took such an edit for the step's, undid it and
BLOCKED the task, though the jail had made that file read-only to the step.

Outside the jail (`sandbox: false`) specd cannot tell who wrote, so the change is still undone and blocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from git_harness import RUN_TIMEOUT, GitProject

from specd.system import jail

AGENT = r'''
import json, os, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
step = os.environ["SPECD_STEP"]
sys.stdin.read()
with open(HERE / "steps.log", "a") as log:
    log.write(step + "\n")
if step == "plan":
    (HERE / "held").write_text("held")
    while (HERE / "hold").exists():
        time.sleep(0.05)
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done"}))
'''

EDITED = {"schema_version": "1.0", "pipelines": {"main": [
    {"name": "discuss", "workflow": "work.md"}, {"name": "plan", "workflow": "work.md"},
    {"name": "review", "workflow": "work.md"}, {"name": "execute", "workflow": "work.md", "enabled": False}]}}


def _edit_while_plan_runs(gp: GitProject, edited: str = "", path: str = ".specd/pipeline.json") \
        -> tuple[subprocess.CompletedProcess[str], str]:
    """Start task a, save ``edited`` (the EDITED pipeline by default) at ``path`` while its plan step works, and
    let the run go on to its end."""
    edited = edited or json.dumps(EDITED, indent=2)
    gp.agent.write_text(AGENT, encoding="utf-8")
    gp.new("a")
    (gp.dir / "hold").write_text("")
    proc = gp.start("a")
    deadline = time.monotonic() + RUN_TIMEOUT
    while not (gp.dir / "held").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the plan step never started"
        time.sleep(0.05)
    gp.write(path, edited)  # you, in your editor, while the agent works
    (gp.dir / "hold").unlink()
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), edited


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_a_pipeline_edit_made_while_a_jailed_step_runs_is_kept_and_used(gp: GitProject) -> None:
    done, edited = _edit_while_plan_runs(gp)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert (gp.root / ".specd/pipeline.json").read_text(encoding="utf-8") == edited
    assert "from outside the jail" in said
    assert ".specd/pipeline.json" in said
    assert (gp.dir / "steps.log").read_text().split() == ["discuss", "plan", "review"]  # the edited pipeline ran


def test_outside_the_jail_the_same_edit_is_undone_and_blocks(gp: GitProject) -> None:
    pipeline = json.loads((gp.root / ".specd/pipeline.json").read_text(encoding="utf-8"))
    pipeline["agent"] = {"sandbox": False}
    before = json.dumps(pipeline, indent=2)
    gp.write(".specd/pipeline.json", before)
    done, _ = _edit_while_plan_runs(gp)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "changed specd's machinery: .specd/pipeline.json" in said
    assert (gp.root / ".specd/pipeline.json").read_text(encoding="utf-8") == before
    assert "from outside the jail" not in said


def test_a_change_the_jail_let_through_is_still_the_steps(tmp_path: Path) -> None:
    """The rule itself: only a path the jail held read-only is judged someone else's."""
    from specd.engine.machinery import _read_only

    root = tmp_path / "p"
    mounts = [(True, root / ".git"), (True, root / ".specd"), (False, root / ".specd/tasks/a"),
              (True, root / ".specd/tasks/a/config.json")]
    assert _read_only(root / ".specd/pipeline.json", mounts)
    assert _read_only(root / ".git/hooks/pre-commit", mounts)
    assert _read_only(root / ".specd/tasks/a/config.json", mounts)
    assert not _read_only(root / ".specd/tasks/a/.git-pending.json", mounts)  # made during the step: writable
    assert not _read_only(root / ".husky/pre-commit", mounts)  # the project is writable
    assert not _read_only(root / ".specd/pipeline.json", [])  # no jail: nothing is judged someone else's


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_an_edit_that_does_not_load_stops_the_run_blocked_naming_the_file(gp: GitProject) -> None:
    half_typed = '{"schema_version": "1.0", "pipelines": {"main": ['
    done, _ = _edit_while_plan_runs(gp, half_typed)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "Traceback" not in said
    assert "the pipeline was edited during the run and no longer loads" in said
    assert "pipeline.json" in said
    assert said.count("fix the syntax at that line") == 1, said  # the file's fix, said once
    assert (gp.dir / "steps.log").read_text().split() == ["discuss", "plan"]  # plan finished; nothing ran after
    state = json.loads((gp.root / ".specd/tasks/a/.pipeline-state.json").read_text(encoding="utf-8"))
    assert state["status"] == "BLOCKED"
    log = subprocess.run(["git", "log", "--format=%s"], cwd=gp.root, capture_output=True, text=True, check=True)
    assert "docs(a): plan complete" in log.stdout  # the finished step's commit is kept


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_your_own_claude_saving_its_local_settings_while_a_jailed_step_runs_is_kept(gp: GitProject) -> None:
    # Claude Code writes .claude/settings.local.json when you allow a command for good in your own session. The
    # jail holds that file read-only to the step, so a change to it during the step is yours: kept, said, and the
    # run goes on.
    gp.write(".claude/settings.local.json", '{"permissions": {"allow": []}}')
    mine = '{"permissions": {"allow": ["Bash(npm test)"]}}'
    done, _ = _edit_while_plan_runs(gp, mine, ".claude/settings.local.json")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert (gp.root / ".claude/settings.local.json").read_text(encoding="utf-8") == mine
    assert "from outside the jail" in said
    assert ".claude/settings.local.json" in said
