"""The workflow of one task: deterministic control flow only; every file, git and agent action is an activity.

    wait until every needed task's workflow completed  (an activity reads them; a signal from a need wakes it)
    with the run's -j N: wait until the task N places before it in the run settled (ended, or waits for a human)
    loop: run the task until it stops or waits        (activity `specd_run`, on any worker, heartbeating)
          waiting for a human? hold until the answer signal arrives, then run again with that answer
    cancelled? an activity marks the task CANCELLED and pushes that

The job and every result are small dicts of names, statuses and summaries: no prompt, transcript or environment.
Anyone who reaches Temporal can start one, so every activity verifies the job before it acts (``job.verify``); a
refused job ends the workflow failed, BLOCKED in the memo with the reason, and nobody it names is signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError
from temporalio.workflow import ActivityCancellationType

from specd.executors.temporal.job import REFUSED

NAME = "specd-task"
FINAL = ("COMPLETE", "FAILED", "CANCELLED", "BLOCKED")
# Polling the needs is only the fallback: a need that finishes signals its dependants at once.
NEED_POLL = (1.0, 20.0)


@workflow.defn(name=NAME)
class TaskWorkflow:
    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.nudged = False

    @workflow.signal
    def answer(self, given: dict[str, Any]) -> None:
        """A held gate's answer: {"answer": "approve" | "reject" | "skip", "note": "...", "by": "who sent it"}."""
        self.answers.append(given)

    @workflow.signal
    def need_finished(self, task: str) -> None:
        self.nudged = True

    @workflow.run
    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        heartbeat = _heartbeat(job.get("heartbeat_timeout"))
        steps = {"start_to_close_timeout": timedelta(days=7), "heartbeat_timeout": heartbeat,
                 "retry_policy": RetryPolicy(initial_interval=timedelta(seconds=1),
                                             maximum_interval=timedelta(seconds=10)),
                 "cancellation_type": ActivityCancellationType.WAIT_CANCELLATION_COMPLETED}
        short = {"start_to_close_timeout": timedelta(minutes=5)}
        try:
            await self._after(job, short)
            held = await self._needs(job, short)
            if held:
                return {"task": job["task"], "status": "NOT_STARTED", "reason": "waits for " + ", ".join(held),
                        "waiting_for": held}
            given: dict[str, Any] | None = None
            while True:
                workflow.upsert_memo({"status": "IN_PROGRESS", "reason": ""})
                stopped: dict[str, Any] = await workflow.execute_activity(  # type: ignore[call-overload]
                    "specd_run", {**job, "answer": given}, **steps)
                if stopped["status"] != "WAITING_FOR_HUMAN":
                    break
                workflow.upsert_memo({"status": "WAITING_FOR_HUMAN", "reason": stopped.get("reason", "")})
                await self._tell(job.get("next") or [], job)
                await workflow.wait_condition(lambda: bool(self.answers))
                given = self.answers.pop(0)
        except (asyncio.CancelledError, ActivityError) as exc:
            if isinstance(exc, ActivityError) and isinstance(exc.cause, ApplicationError) \
                    and exc.cause.type == REFUSED:
                workflow.upsert_memo({"status": "BLOCKED", "reason": exc.cause.message})
                # BLOCKED, not FAILED: a submitter's mismatch is fixed and submitted again (a FAILED task is final)
                raise ApplicationError(exc.cause.message, type=REFUSED, non_retryable=True) from None
            # A cancel reaches the workflow as CancelledError, or, while its step ran, as that step's cancellation.
            if isinstance(exc, ActivityError) and not isinstance(exc.cause, CancelledError):
                raise
            workflow.upsert_memo({"status": "CANCELLED", "reason": "cancelled"})
            await workflow.execute_activity("specd_cancel", job, **short)  # type: ignore[call-overload]
            await self._tell_dependants(job)
            raise
        workflow.upsert_memo({"status": stopped["status"], "reason": stopped.get("reason", "")})
        await self._tell_dependants(job)
        return stopped

    async def _needs(self, job: dict[str, Any], options: dict[str, Any]) -> list[str]:
        """[] once every need COMPLETE; the needs that ended otherwise (never to complete without a human)."""
        if not job.get("needs"):
            return []
        wait = NEED_POLL[0]
        while True:
            workflow.upsert_memo({"status": "WAITING_FOR_NEEDS", "reason": ""})
            states: dict[str, str] = await workflow.execute_activity("specd_needs", job, **options)
            ended = [need for need, state in states.items() if state not in ("COMPLETE", "RUNNING")]
            if ended:
                return ended
            if all(state == "COMPLETE" for state in states.values()):
                return []
            self.nudged = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self.nudged, timeout=timedelta(seconds=wait))
            wait = min(NEED_POLL[1], wait * 2)

    async def _after(self, job: dict[str, Any], options: dict[str, Any]) -> None:
        """-j N across workers: this task starts once the one N places before it in the run has settled."""
        if not job.get("after"):
            return
        wait = NEED_POLL[0]
        while True:
            workflow.upsert_memo({"status": "WAITING_FOR_NEEDS", "reason": ""})
            if await workflow.execute_activity("specd_settled", {**job, "task": job["after"]}, **options):
                return
            self.nudged = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self.nudged, timeout=timedelta(seconds=wait))
            wait = min(NEED_POLL[1], wait * 2)

    async def _tell_dependants(self, job: dict[str, Any]) -> None:
        await self._tell([*(job.get("dependants") or []), *(job.get("next") or [])], job)

    async def _tell(self, others: list[str], job: dict[str, Any]) -> None:
        for other in others:
            try:
                await workflow.get_external_workflow_handle(other).signal(TaskWorkflow.need_finished, job["task"])
            except Exception:  # noqa: BLE001 (not started, or closed: it polls its needs anyway)
                workflow.logger.debug("no dependant %s to tell", other)


def _heartbeat(value: object) -> timedelta:
    """The job's heartbeat timeout; anything but a positive number is left to the first activity, which refuses
    the job by name (parsing it here would fail the workflow task, again and again, with no word)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return timedelta(seconds=float(value))
    return timedelta(seconds=30)
