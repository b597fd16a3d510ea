"""One activity per step, named after it, so Temporal's UI lists a task's pipeline in order.

An activity's type is the step's name as a person reads it: ``discuss``, or ``phase 01 · execute`` for a step that
runs once per phase (``label``). Every such type reaches one dynamic activity, which runs the task's next step (and
only that one) exactly as ``specd_run`` runs them all: `specd continue TASK --json` in the worker's clone, with
SPECD_STEPS=1, so the run stops IN_PROGRESS once the step is done, entered the next one (its gate asked: a gate
ends the activity WAITING_FOR_HUMAN) and names it in its result. The first name comes from the submitter when the
branch it pushed holds the task as its files do; else from ``specd_next``, which reads the task's saved state on
the remote's branch, as the name after a held gate's answer does. The type
names the step the workflow expects; the step run is the one the remote's branch holds next (a retry after a step
was pushed runs the following one under the old name).

Here too: ``specd_needs`` and ``specd_settled``, the two activities that only ask Temporal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import activity
from temporalio.common import RawValue

from specd.errors import said
from specd.executors.temporal import answered, clones, lookup
from specd.executors.temporal.job import Job, JobRefused
from specd.executors.temporal.parked import Parked
from specd.executors.temporal.shown import answered_by_signals
from specd.executors.temporal.workflow import FIRST, UNKNOWN
from specd.tasks.project import Project
from specd.tasks.status import task_status


def label(nxt: Any) -> str | None:
    """``step``, or ``phase PHASE · step``; None when there is no next step."""
    if not isinstance(nxt, dict) or not isinstance(nxt.get("step"), str) or not nxt["step"]:
        return None
    phase = nxt.get("phase")
    return f"phase {phase} · {nxt['step']}" if phase else str(nxt["step"])


def result(task: str, finished: dict[str, Any], step: str) -> dict[str, Any]:
    """A step's activity result, from its run's ``run_finished``: the status, and the step after it, by name. The
    reason (the workflow's memo, Temporal's UI) names the answers that signal the workflow, never `continue`."""
    status, reason = str(finished.get("status")), str(finished.get("reason") or "")
    reason = answered_by_signals(task, {"status": status, "reason": reason})["reason"]
    return {"task": task, "status": status, "reason": reason,
            "step": step, **({"next": label(finished.get("next"))} if finished.get("next") else {})}


def refused(task: str, stderr: str, code: int | None) -> dict[str, Any]:
    """The result of a run that ended before it ran (bad input, exit 2: FAILED; else BLOCKED), with the reason its
    error gave (``errors.said``)."""
    return {"task": task, "status": "FAILED" if code == 2 else "BLOCKED",
            "reason": said(stderr) or f"specd continue exited with {code}"}


class StepActivities:
    """The activities a per-step workflow schedules besides its steps; mixed into ``activities.Activities``."""

    def _verified(self, raw: Any) -> Job:
        raise NotImplementedError

    def _refused(self, exc: JobRefused) -> Exception:
        raise NotImplementedError

    def _clone(self, job: Job, needs: tuple[str, ...], parked: Parked | None = None) -> clones.Clone:
        raise NotImplementedError

    async def _run(self, raw: Any, *, one: bool) -> dict[str, Any]:
        raise NotImplementedError

    async def _unpark(self, job: Job) -> None:
        raise NotImplementedError

    @activity.defn(dynamic=True)
    async def step(self, args: Sequence[RawValue]) -> dict[str, Any]:
        """Any step's name: run the task's next step, one only."""
        raw = activity.payload_converter().from_payload(args[0].payload) if args else None
        return await self._run(raw, one=True)

    @activity.defn(name=FIRST)
    async def first(self, raw: dict[str, Any]) -> str:
        """The name of the task's next step, as its state on the remote's branch has it, with the job's answer (to a
        held gate) applied in the clone first: never pushed, and undone by the next activity's fresh checkout."""
        job = self._verified(raw)
        try:
            await self._unpark(job)
            clone = await asyncio.to_thread(self._clone, job, ())
            if job.answer:
                await asyncio.to_thread(answered.apply, Project(clone.path), job.task, job.answer, job.answer_id)
            view = await asyncio.to_thread(task_status, Project(clone.path), job.task)
        except JobRefused as exc:
            raise self._refused(exc) from None
        except Exception:  # noqa: BLE001 (a name only: the step itself says what is wrong)
            activity.logger.info("%s: no next step read; the first activity is named %r", job.task, UNKNOWN)
            return UNKNOWN
        return label(view.get("next")) or UNKNOWN

    @activity.defn(name="specd_needs")
    async def needs(self, raw: dict[str, Any]) -> dict[str, str]:
        """Each need's state as its workflow tells it: COMPLETE, RUNNING, or how it ended otherwise."""
        job = self._verified(raw)
        client = activity.client()
        return {need: await lookup.outcome(client, job.key, need) for need in job.needs}

    @activity.defn(name="specd_settled")
    async def settled(self, raw: dict[str, Any]) -> bool:
        """Whether the task's workflow runs no step now: none, ended, or waiting for a human (for the run's -j)."""
        job = self._verified(raw)
        found = await lookup.state(activity.client(), job.key, job.task)
        return found is None or not found["running"] or found["status"] == "WAITING_FOR_HUMAN"
