"""A task running in its own worktree (`.specd/worktrees/<task>/`, branch `specd/<task>`) is answered and
inspected from the main tree exactly as one running there (issue 17, part 3)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from git_harness import GitProject


def test_a_task_in_a_worktree_is_answered_and_shown_from_the_main_tree(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=("discuss", "plan"))
    gp.rules({"*": {"write": {"out-{task}-{step}.txt": "{task} {step}\n"}}})
    gp.new("t")
    gp.new("other")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "tasks")
    gp.git("worktree", "add", "-q", "-b", "specd/t", ".specd/worktrees/t")
    tree = gp.root / ".specd" / "worktrees" / "t"
    live = tree / ".specd" / "tasks" / "t"

    # interactive with no input: the run stops at the first gate, WAITING_FOR_HUMAN, in the worktree
    held = gp.specd("--project", str(tree), "continue", "t", "--interactive", "--agent", gp.agent_spec())
    assert held.returncode == 3, held.stdout + held.stderr
    assert (live / ".pipeline-state.json").is_file()
    assert not (gp.root / ".specd" / "tasks" / "t" / ".pipeline-state.json").exists()  # main's copy untouched

    rows = {row["task"]: row for row in json.loads(gp.specd("status", "--json").stdout)["tasks"]}
    assert rows["t"]["status"] == "WAITING_FOR_HUMAN"
    assert rows["t"]["branch"] == "specd/t"
    assert rows["t"]["folder"] == ".specd/worktrees/t/.specd/tasks/t"
    assert rows["other"]["status"] == "NOT_STARTED"
    assert "branch" not in rows["other"]
    plain = gp.specd("status").stdout
    assert any(line.split()[:3] == ["t", "(specd/t)", "WAITING_FOR_HUMAN"] for line in plain.splitlines())

    one = json.loads(gp.specd("status", "t", "--json").stdout)
    assert (one["status"], one["branch"]) == ("WAITING_FOR_HUMAN", "specd/t")

    approved = gp.specd("approve", "t", "--note", "go on")
    assert approved.returncode == 0, approved.stderr
    state = json.loads((live / ".pipeline-state.json").read_text())
    assert any(c.get("answer") == "approve" for c in state.get("checkpoints", [])), state

    logs = gp.specd("logs", "t")
    assert logs.returncode == 0, logs.stderr
    assert "discuss" in logs.stdout

    done = gp.specd("--project", str(tree), "continue", "t", "--auto", "--agent", gp.agent_spec())
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tree / "out-t-discuss.txt").is_file()
    assert not (gp.root / "out-t-discuss.txt").exists()  # the user's tree is not where the task ran
    on_branch = gp.git("log", "--format=%s", "specd/t")
    assert "docs(t): discuss complete" in on_branch
    assert "docs(t)" not in gp.git("log", "--format=%s", "HEAD")
    assert json.loads(gp.specd("status", "t", "--json").stdout)["status"] == "COMPLETE"
    # a COMPLETE row from a worktree is never indexed: it is read from the worktree each time
    rows = {row["task"]: row for row in json.loads(gp.specd("status", "--json").stdout)["tasks"]}
    assert (rows["t"]["status"], rows["t"]["branch"]) == ("COMPLETE", "specd/t")


def test_cancel_from_the_main_tree_reaches_the_worktree(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=("discuss",))
    gp.new("t")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "tasks")
    gp.git("worktree", "add", "-q", "-b", "specd/t", ".specd/worktrees/t")
    tree = gp.root / ".specd" / "worktrees" / "t"
    assert gp.specd("--project", str(tree), "continue", "t", "--interactive",
                    "--agent", gp.agent_spec()).returncode == 3
    cancelled = gp.specd("cancel", "t")
    assert cancelled.returncode == 0, cancelled.stderr
    live = json.loads((tree / ".specd" / "tasks" / "t" / ".pipeline-state.json").read_text())
    assert live["status"] == "CANCELLED"
    assert not (gp.root / ".specd" / "tasks" / "t" / ".pipeline-state.json").exists()


def test_a_task_whose_worktree_is_being_made_shows_from_the_main_tree_and_one_gone_says_so(tmp_path: Path) -> None:
    """`specd run` records a task's worktree home before git makes the worktree: a `status` in that moment shows
    the main tree's copy (a CI run once got "which is gone" there), and keeps no answer, since the branch and the
    worktree that end that moment are watched by none (a suite run under load once got the kept answer after the
    branch was made). Once the branch exists, a missing worktree is gone, and said so with its fix."""
    from specd.tasks import home
    from specd.tasks.project import Project

    gp = GitProject(tmp_path, steps=("discuss",))
    gp.new("t")
    home.settle(Project(gp.root), "t", home.worktree("t"))  # recorded; `worktree add` has not run yet
    time.sleep(0.2)  # past the 0.1 s within which an input's change is too recent for an answer to be kept
    placing = gp.specd("status", "t", "--json")
    assert placing.returncode == 0, placing.stderr
    assert json.loads(placing.stdout)["status"] == "NOT_STARTED"

    gp.git("branch", "specd/t")  # made once, then its folder deleted: gone
    gone = gp.specd("status", "t", "--json")
    assert gone.returncode == 2
    assert "which is gone" in gone.stderr
    assert "`specd run t` makes it again from branch specd/t" in gone.stderr
    gp.git("pack-refs", "--all")  # the same when git keeps the branch in packed-refs
    assert gp.specd("status", "t", "--json").returncode == 2


def test_a_task_whose_branch_is_made_before_its_worktree_shows_from_the_main_tree(tmp_path: Path) -> None:
    """`git worktree add -b` makes the branch, then the worktree's folder: a `status` in between (a `specd run`
    holding its turn to add worktrees) took the worktree for one deleted, exit 2 "which is gone"; CI's
    test_an_answered_gate_makes_the_waiting_run_go_on polled right there once."""
    from filelock import FileLock

    from specd.tasks import home
    from specd.tasks.project import Project

    gp = GitProject(tmp_path, steps=("discuss",))
    gp.new("t")
    home.settle(Project(gp.root), "t", home.worktree("t"))
    gp.git("branch", "specd/t")  # made; the worktree's folder not yet
    lock = gp.root / ".specd" / home.WORKTREES / home.ADDING
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock)):  # as `specd run` holds it while git adds the worktree
        placing = gp.specd("status", "t", "--json")
    assert placing.returncode == 0, placing.stderr  # before: 2, "which is gone"
    assert json.loads(placing.stdout)["status"] == "NOT_STARTED"
    assert gp.specd("status", "t", "--json").returncode == 2  # the turn given back and still no worktree: gone
