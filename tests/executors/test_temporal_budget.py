"""The run's budget on Temporal, read from what the workers pushed: real git repositories, no Temporal needed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from specd.executors.temporal import budget


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "commit.gpgsign=false",
                    *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


def push_cost(tmp_path: Path, remote: Path, task: str, cost: float) -> None:
    """A worker pushing task's branch with its run state spending ``cost`` USD so far."""
    work = tmp_path / f"w-{task}"
    if not work.exists():
        git(tmp_path, "clone", "-q", str(remote), str(work))
        git(work, "checkout", "-q", "-b", f"specd/{task}")
    folder = work / ".specd" / "tasks" / task
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".pipeline-state.json").write_text(json.dumps({"status": "IN_PROGRESS", "usage": {"cost_usd": cost}}))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", f"{task} at {cost}")
    git(work, "push", "-q", "origin", f"specd/{task}")


def test_each_child_gets_what_the_whole_run_has_left(tmp_path: Path, remote: Path) -> None:
    push_cost(tmp_path, remote, "a", 0.5)  # spent before this run: not the run's
    reader = tmp_path / "reader"
    git(tmp_path, "clone", "-q", str(remote), str(reader))
    plan = budget.plan(reader, "origin", 2.5, ["a", "b"])
    assert plan == {"total": 2.5, "base": {"a": 0.5, "b": 0.0}}  # b has no branch yet
    push_cost(tmp_path, remote, "a", 1.5)  # a spent 1 USD in this run
    assert budget.child_cap(reader, "origin", plan, "b", 0.0) == pytest.approx(1.5)
    push_cost(tmp_path, remote, "b", 1.0)
    # a's own earlier spending counts towards its cap, not against the run: 1.5 so far + (2.5 - 1 - 1) left
    assert budget.child_cap(reader, "origin", plan, "a", 1.5) == pytest.approx(2.0)
    push_cost(tmp_path, remote, "b", 3.0)  # spent past the cap: nothing left, never less than its own total
    assert budget.child_cap(reader, "origin", plan, "a", 1.5) == pytest.approx(1.5)


def test_no_max_cost_means_no_plan(tmp_path: Path, remote: Path) -> None:
    assert budget.plan(tmp_path, str(remote), None, ["a"]) is None


def test_a_jobs_budget_only_ever_lowers_what_the_worker_and_the_pipeline_allow(tmp_path: Path, remote: Path) -> None:
    """A job's budget comes from anyone who reaches Temporal: passed as the child's --max-cost, a larger figure
    would replace the pipeline's agent.max_cost_usd, so the child gets the least of them."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    task = clone / ".specd" / "tasks" / "a"
    task.mkdir(parents=True)
    (task / "config.json").write_text("{}")
    lavish = {"total": 1000.0, "base": {"a": 0.0}}
    assert budget.cap(clone, "a", None, 2.0) == 2.0  # no run budget: the worker's own --max-cost
    assert budget.cap(clone, "a", None, None) is None  # nor that: the run's saved one, else the pipeline's
    assert budget.cap(clone, "a", lavish, 2.0) == pytest.approx(2.0)
    assert budget.cap(clone, "a", lavish, None) == pytest.approx(1000.0)  # nothing caps this project anyway
    (clone / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "agent": {"max_cost_usd": 3.0},
        "pipelines": {"main": [{"name": "s1", "workflow": "work.md"}]}}))
    (clone / ".specd" / "workflows").mkdir()
    (clone / ".specd" / "workflows" / "work.md").write_text("---\ndescription: w\noutcomes: [\"done\"]\n---\n\n# w\n")
    assert budget.cap(clone, "a", lavish, None) == pytest.approx(3.0)  # the committed pipeline's
    assert budget.cap(clone, "a", {"total": 1.0, "base": {"a": 0.0}}, 2.0) == pytest.approx(1.0)  # lower: taken
