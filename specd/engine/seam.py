"""The one seam between one task's engine and whatever runs tasks: ``run_task`` runs a task until it stops.

The CLI's `continue`, the local executor (many tasks, one worktree each) and a distributed executor all call
this function and nothing else of the engine. What comes back says why the run stopped, in the run state's
own words, so an executor can decide what to do next (start a dependent task, wait for an answer, give up)
without reading files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from specd.engine import parking, runner
from specd.errors import STATUS_EXIT
from specd.events import EventBus
from specd.human import Human
from specd.tasks.project import Project

# The variable that stops a run after N steps (a Temporal worker runs one step per activity): the seam names it,
# so an executor never reaches into the runner for it.
STEPS = runner.STEPS
PARK = parking.PARK  # with STEPS: the run waits to be handed its next step (engine/parking.py)


@dataclass(frozen=True)
class Stopped:
    """Why a run stopped: COMPLETE, WAITING_FOR_HUMAN, BLOCKED, FAILED, CANCELLED or ABORTED."""

    task: str
    status: str
    reason: str = ""
    waiting: dict[str, Any] | None = field(default=None)

    @property
    def exit_code(self) -> int:
        return STATUS_EXIT[self.status]

    @property
    def finished(self) -> bool:
        return self.status == "COMPLETE"


def run_task(project: Project, task: str, *, events: EventBus, human_for: Callable[[str], Human],
             mode_flag: str | None = None, agent_spec: str | None = None, max_cost: float | None = None,
             approve: str | None = None) -> Stopped:
    """Run ``task`` until it stops. Bad input (a broken pipeline file, a held wait with nothing to answer it)
    is raised as a ``SpecdError``, as everywhere else."""
    try:
        status, reason, waiting = runner.run(project, task, mode_flag=mode_flag, agent_spec=agent_spec,
                                             human_for=human_for, events=events, max_cost=max_cost, approve=approve)
    finally:
        # Once, after the lock is released, whatever stopped the run: the next listing reads this row.
        from specd.tasks.readmodel.own import write_row

        write_row(project, task)
    return Stopped(task, status, reason, waiting)
