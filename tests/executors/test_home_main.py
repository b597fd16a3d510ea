"""A task that lives in the main tree under `specd run`: it needs work not landed yet, and how the summary names it.

specd never merges into the user's tree, so a main-tree task whose need finished on its own branch is refused
with the commands that bring the need in; once landed, it runs there. The summary names no branch for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from executor_harness import Repo


def _flags(repo: Repo) -> tuple[str, ...]:
    return ("--semi-auto", "--agent", repo.agent())


def _summary(out: str, task: str) -> dict[str, Any]:
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    found: dict[str, Any] = next(r for r in rows if r.get("kind") == "summary" and r["task"] == task)
    return found


def test_a_main_tree_task_whose_need_is_not_landed_is_refused_with_the_land_command(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("a")
    repo.new("b", "a")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "tasks")
    assert repo.specd("continue", "b", *_flags(repo)).returncode == 3  # b lives in the main tree now, at its gate
    assert repo.specd("approve", "b").returncode == 0
    ran_a = repo.specd("run", "a", "--auto", "--agent", repo.agent())
    assert ran_a.returncode == 0, ran_a.stderr  # a is COMPLETE on branch specd/a, not landed
    head = repo.git("rev-parse", "HEAD")

    refused = repo.specd("run", "b", "--json", *_flags(repo))

    summary = _summary(refused.stdout, "b")
    assert summary["status"] == "BLOCKED", refused.stdout
    assert "needs a, whose work is on specd/a, not in your tree" in summary["reason"]
    assert "`specd land a`, then `specd run b`" in summary["reason"]
    assert repo.git("rev-parse", "HEAD") == head  # nothing merged into the user's tree
    assert [line.split()[1] for line in (repo.root / "ledger-b.txt").read_text().splitlines()] == ["s1"]
    assert not (repo.root / ".specd" / "worktrees" / "b").exists()  # and no second copy made

    landed = repo.specd("land", "a")
    assert landed.returncode == 0, landed.stderr
    done = repo.specd("run", "b", "--json", *_flags(repo))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (_summary(done.stdout, "b")["status"], _summary(done.stdout, "b")["home"]) == ("COMPLETE", "main")
    assert _summary(done.stdout, "b")["branch"] is None


def test_the_run_summary_names_your_tree_not_a_branch_for_a_main_tree_task(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("m")
    repo.new("w")
    assert repo.specd("continue", "m", *_flags(repo)).returncode == 3
    assert repo.specd("approve", "m").returncode == 0

    done = repo.specd("run", "--all", "--auto", "--agent", repo.agent())

    assert done.returncode == 0, done.stdout + done.stderr
    rows = {cells[0]: cells for line in done.stdout.splitlines()
            if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 4}
    assert rows["m"][3] == "(your tree)", done.stdout
    assert rows["w"][3] == "specd/w"
    assert "specd/m" not in done.stdout
