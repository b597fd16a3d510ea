"""The executor contract: what any executor (local now, Temporal later) must do with a graph of tasks."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from executor_harness import Repo, assert_clean_branches


def test_independent_tasks_all_complete_side_by_side(executor: Any, repo: Repo) -> None:
    tasks = [f"t{i}" for i in range(6)]
    for task in tasks:
        repo.new(task)
    before = repo.snapshot()
    done = executor.run("--all", "--auto", "-j", "6")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(executor.status(t) == "COMPLETE" for t in tasks)
    assert_clean_branches(repo, tasks)
    assert repo.snapshot() == before  # the user's tree, index, stash and HEAD are untouched
    ledger = repo.ledger()
    assert sorted(Counter((t, s) for t, s, _, _ in ledger).values()) == [1] * (6 * 3)
    # the agents' own clocks: some two tasks had a step open at the same moment
    overlaps = [(a, b) for a in ledger for b in ledger if a[0] < b[0] and a[2] < b[3] and b[2] < a[3]]
    assert overlaps, ledger


def test_a_chain_runs_in_order(executor: Any, repo: Repo) -> None:
    repo.new("a")
    repo.new("b", "a")
    repo.new("c", "b")
    done = executor.run("c", "--auto")
    assert done.returncode == 0, done.stdout + done.stderr
    first = {t: min(start for task, _, start, _ in repo.ledger() if task == t) for t in "abc"}
    last = {t: max(end for task, _, _, end in repo.ledger() if task == t) for t in "abc"}
    assert last["a"] <= first["b"]
    assert last["b"] <= first["c"]
    assert repo.has("c", "out-a-s3.txt")
    assert repo.has("c", "out-b-s3.txt")


def test_a_diamond_merges_both_needs_and_a_conflict_stops_only_the_join(executor: Any, repo: Repo) -> None:
    repo.new("a")
    repo.new("b", "a")
    repo.new("c", "a")
    repo.new("d", "b", "c")
    repo.new("e")
    (repo.dir / "conflict-b").write_text("")
    (repo.dir / "conflict-c").write_text("")
    done = executor.run("--all", "--auto", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    summary = {row["task"]: row for row in map(json.loads, done.stdout.splitlines()) if row["kind"] == "summary"}
    assert {t: summary[t]["status"] for t in "abce"} == dict.fromkeys("abce", "COMPLETE")
    assert summary["d"]["status"] == "BLOCKED"
    assert "shared.txt" in summary["d"]["reason"]
    assert executor.conflict_hint in summary["d"]["reason"]
    assert not [row for row in repo.ledger() if row[0] == "d"]  # d never ran a step
    assert executor.merge_undone("d")


def test_the_join_starts_from_both_needs(executor: Any, repo: Repo) -> None:
    repo.new("b")
    repo.new("c")
    repo.new("d", "b", "c")
    done = executor.run("d", "--auto")
    assert done.returncode == 0, done.stdout + done.stderr
    first = repo.git("log", "--format=%H", "--grep=^docs(d): starting s1$", f"{repo.ref_prefix}specd/d").split()[-1]
    at_start = repo.git("ls-tree", "-r", "--name-only", f"{first}~1").split()  # d's tree before its first step
    assert {"out-b-s3.txt", "out-c-s3.txt", "ledger-b.txt", "ledger-c.txt"} <= set(at_start)
    assert not [f for f in at_start if f.startswith("out-d-")]


def test_a_held_gate_waits_and_is_answered_later(executor: Any, tmp_path: Any) -> None:
    repo = Repo(tmp_path / "gate", pause="s2")
    executor.repo = repo
    repo.new("g")
    repo.new("free")
    waiting = executor.run("--all", "--semi-auto")
    assert waiting.returncode == 3, waiting.stdout + waiting.stderr
    assert executor.status("g") == "WAITING_FOR_HUMAN"
    assert executor.status("free") == "WAITING_FOR_HUMAN"
    for task in ("g", "free"):
        answered = executor.approve(task)
        assert answered.returncode == 0, answered.stderr
    done = executor.run("--all", "--semi-auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert executor.status("g") == "COMPLETE"
    assert_clean_branches(repo, ["g", "free"])


def test_a_cancelled_task_is_final_and_holds_its_dependants(executor: Any, repo: Repo) -> None:
    repo.new("x")
    repo.new("y", "x")
    repo.new("z")
    assert executor.run("z", "--auto").returncode == 0
    executor.cancel_midway("x")
    done = executor.run("--all", "--auto", "--json")
    rows = {row["task"]: row for row in map(json.loads, done.stdout.splitlines()) if row["kind"] == "summary"}
    assert rows["x"]["status"] == "CANCELLED"
    assert rows["y"]["waiting_for"] == ["x"]
    assert done.returncode == 4  # a cancelled task has its own code, before "waits" (3): `run && deploy` stops


def test_kill_9_mid_step_then_run_again_completes_everything_once(executor: Any, repo: Repo) -> None:
    tasks = [f"k{i}" for i in range(8)]  # eight tasks running, as issue 17's acceptance has it
    for task in tasks:
        repo.new(task)
    before = repo.snapshot()
    held = [f"{task}-s{1 + i % 3}" for i, task in enumerate(tasks)]  # every task inside a step, some past s1
    executor.kill9_midstep(["--all", "--auto", "-j", "8"], held)
    done = executor.run("--all", "--auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(executor.status(t) == "COMPLETE" for t in tasks)
    counts = Counter((t, s) for t, s, _, _ in repo.ledger())
    assert counts == Counter({(t, s): 1 for t in tasks for s in repo.steps})  # no finished step ran twice
    assert_clean_branches(repo, tasks)
    assert repo.snapshot() == before


def test_max_cost_caps_the_whole_run(executor: Any, repo: Repo) -> None:
    for task in ("m1", "m2", "m3"):
        repo.new(task)
    usage = json.dumps({"input_tokens": 10, "output_tokens": 5, "cost_usd": 1.0})
    done = executor.run("--all", "--auto", "-j", "1", "--max-cost", "2.5", "--json", env={"AGENT_USAGE": usage})
    assert done.returncode == 3, done.stdout + done.stderr
    steps = len(repo.ledger())
    assert 3 <= steps <= 4  # 2.5 USD buys three steps of 1 USD (the third crosses it), never all nine
    rows = [r for r in map(json.loads, done.stdout.splitlines()) if r["kind"] == "summary"]
    assert any(r["status"] != "COMPLETE" for r in rows)
