"""`checks:` behave the same on every executor: local worktrees, and Temporal workers in their own clones."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from executor_harness import Repo

# Fails until the agent has run s1 twice in this tree: the first attempt's check fails, the second passes.
CHECK = "test \"$(grep -c ' s1 ' ledger-$SPECD_TASK.txt)\" -ge 2 || { echo only one run of s1 so far; exit 1; }"


def history(repo: Repo, task: str) -> list[dict[str, Any]]:
    """The task's history rows as its branch holds them (the executor's own clone may be elsewhere)."""
    text = repo.git("show", f"{repo.ref_prefix}specd/{task}:.specd/tasks/{task}/.pipeline-state.history.jsonl")
    return [json.loads(line)["row"] for line in text.splitlines() if line.strip()]


def test_a_failing_check_runs_the_step_again_on_every_executor(executor: Any, repo: Repo) -> None:
    steps = [{"name": "s1", "workflow": "work.md", "checks": [CHECK]}, {"name": "s2", "workflow": "work.md"}]
    repo.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "pipelines": {"main": steps}}))
    repo.git("commit", "-q", "-am", "checks on s1")
    repo.new("c")

    done = executor.run("c", "--auto")

    assert done.returncode == 0, done.stdout + done.stderr
    assert executor.status("c") == "COMPLETE"
    assert Counter(s for _, s, _, _ in repo.ledger()) == Counter({"s1": 2, "s2": 1})
    rows = [(r["step"], r["kind"], r["outcome"]) for r in history(repo, "c")]
    assert rows == [("s1", "step", "done"), ("s1", "checks", "failed"), ("s1", "step", "done"),
                    ("s1", "checks", "passed"), ("s2", "step", "done")]
    failed = next(r for r in history(repo, "c") if r["kind"] == "checks")
    assert failed["checks"][0]["output"] == "only one run of s1 so far"
