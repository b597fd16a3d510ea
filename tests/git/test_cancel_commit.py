"""`specd cancel` commits the CANCELLED record, as a run commits its own state.

No run follows a cancel, so nothing else would commit what it wrote: left in the tree, the record rode into the
user's next `git commit -a`. The commit holds the task's folder alone, never the user's own edits.
"""

from __future__ import annotations

import json
import time

from git_harness import RUN_TIMEOUT, GitProject


def test_a_cancel_at_a_gate_is_committed_and_leaves_the_users_edits_alone(gp: GitProject) -> None:
    pipeline = json.loads((gp.root / ".specd/pipeline.json").read_text())
    pipeline["pipelines"]["main"][1]["pause_in_semi_auto"] = True
    gp.write(".specd/pipeline.json", json.dumps(pipeline))
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "a gate before plan")
    gp.new("t")
    held = gp.specd("continue", "t", "--semi-auto", "--agent", gp.agent_spec())
    assert "WAITING_FOR_HUMAN" in held.stdout + held.stderr, held.stdout + held.stderr
    assert gp.git("status", "--porcelain") == ""
    gp.write("src/app.py", "print('the user is still editing')\n")  # theirs: never in specd's commit

    cancelled = gp.specd("cancel", "t")

    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.strip() == "t: it is CANCELLED"
    subject, files = gp.commits()[-1]
    assert subject == "docs(t): run state CANCELLED"
    assert files
    assert all(f.startswith(".specd/tasks/t/") for f in files)
    record = json.loads(gp.git("show", "HEAD:.specd/tasks/t/.pipeline-state.json"))
    assert record["status"] == "CANCELLED"
    assert record["checkpoints"][-1]["answer"] == "cancel"
    assert gp.git("status", "--porcelain").splitlines() == [" M src/app.py"]

    commits = len(gp.commits())
    again = gp.specd("cancel", "t")  # nothing new to say, so nothing written and nothing committed
    assert "already cancelled" in again.stdout
    assert len(gp.commits()) == commits
    assert gp.git("status", "--porcelain").splitlines() == [" M src/app.py"]


def test_cancelling_a_running_task_leaves_the_tree_clean(gp: GitProject) -> None:
    gp.rules({"discuss": {"hold": True}})
    gp.new("r")
    running = gp.start("r")
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while not (gp.dir / "held").exists():  # the agent is at work, inside its step
            assert running.poll() is None, running.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        cancelled = gp.specd("cancel", "r")
    finally:
        running.communicate(timeout=RUN_TIMEOUT)
    assert cancelled.returncode == 0, cancelled.stderr
    assert "it is CANCELLED" in cancelled.stdout
    assert gp.git("status", "--porcelain") == ""
    # one commit of the final record: the stopped run's, holding who cancelled (no second one by the cancel)
    assert [s for s, _ in gp.commits()].count("docs(r): run state CANCELLED") == 1
    assert gp.commits()[-1][0] == "docs(r): run state CANCELLED"
    record = json.loads(gp.git("show", "HEAD:.specd/tasks/r/.pipeline-state.json"))
    assert record["status"] == "CANCELLED"
    assert [(row["answer"], row["via"], row["was"]) for row in record["checkpoints"]] == [
        ("cancel", "cli", "IN_PROGRESS")]
    assert "starts again from a step" in record["reason"]
