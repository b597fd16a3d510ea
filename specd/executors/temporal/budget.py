"""`--max-cost` across a Temporal run: what the run's tasks have spent, read from what their workers pushed.

The job of every task carries the run's budget: its total, the run's tasks and what each had spent when the run
was submitted. Before a task's step starts its child, the activity fetches the run's task branches from the shared
remote and sums, over the other tasks, their pushed ``usage.cost_usd`` less their spending at submission. The
child then gets, as with the local executor, its own run's total so far plus what the whole run has left, so no
step starts once the run's budget is spent and a task stopped by it ends on a held budget wait.

The job's budget is data from anyone who reaches Temporal, so it only ever lowers what the child would get anyway:
the worker's own --max-cost, else the run's saved one, else the committed pipeline's ``agent.max_cost_usd``
(`specd continue --max-cost` replaces that, so passing a job's larger figure would raise it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specd.errors import SpecdError
from specd.executors.temporal.ids import branch
from specd.git.repo import git
from specd.pipeline import load_pipeline
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import existing_task

REFS = "refs/specd-budget/"  # specd's own refs: the user's and the worker's branches are never touched


def pushed_costs(root: Path, remote: str, tasks: list[str]) -> dict[str, float]:
    """Each task's run-state ``usage.cost_usd`` on the remote's task branch (0 where there is none yet)."""
    if not tasks:
        return {}
    # one fetch of every task branch; a glob does not fail for branches that do not exist yet
    git(root, "fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{branch('*')}:{REFS}*")
    return {task: _cost(root, task) for task in tasks}


def _cost(root: Path, task: str) -> float:
    shown = git(root, "show", f"{REFS}{task}:.specd/tasks/{task}/.pipeline-state.json")
    if shown.returncode != 0:
        return 0.0
    try:
        usage = json.loads(shown.stdout).get("usage") or {}
        return float(usage.get("cost_usd") or 0)
    except (ValueError, RecursionError, AttributeError, TypeError):
        return 0.0


def plan(root: Path, remote: str, total: float | None, tasks: list[str]) -> dict[str, Any] | None:
    """The run's budget for the jobs: None without --max-cost."""
    if total is None:
        return None
    return {"total": total, "base": pushed_costs(root, remote, tasks)}


def child_cap(root: Path, remote: str, budget: dict[str, Any], task: str, own_before: float) -> float:
    """The child's --max-cost: its own total so far plus what the whole run has left (never below its total)."""
    base: dict[str, float] = {t: float(c) for t, c in (budget.get("base") or {}).items()}
    others = [t for t in base if t != task]
    now = pushed_costs(root, remote, others)
    spent = sum(max(0.0, now[t] - base[t]) for t in others) + max(0.0, own_before - base.get(task, 0.0))
    return own_before + max(0.0, float(budget["total"]) - spent)


def cap(root: Path, task: str, run_budget: dict[str, Any] | None, own: float | None) -> float | None:
    """The --max-cost a worker gives the child running ``task`` in the clone at ``root`` (None: none at all)."""
    if run_budget is None:
        return own
    state = StateStore(existing_task(Project(root), task), task).load(with_history=False)
    before = float(state.usage.get("cost_usd") or 0) if state else 0.0
    share = child_cap(root, "origin", run_budget, task, before)
    ceiling = own if own is not None else state.max_cost if state and state.max_cost is not None else _pipeline(root)
    return share if ceiling is None else min(share, ceiling)


def _pipeline(root: Path) -> float | None:
    try:
        value = load_pipeline(Project(root)).agent.get("max_cost_usd")
    except SpecdError:
        return 0.0  # a pipeline that does not load allows nothing (the child says why it does not run)
    return float(value) if value is not None else None
