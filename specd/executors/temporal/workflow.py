"""The workflow of one task: deterministic control flow only; every file, git and agent action is an activity.

    wait until every needed task's workflow completed  (an activity reads them; a signal from a need wakes it)
    with the run's -j N: wait until the task N places before it in the run settled (ended, or waits for a human)
    loop: run the task's next step                    (one activity named after it, on any worker, heartbeating:
          `specd_next` names the first; each step's result names the one after; see steps.py)
          waiting for a human? hold until the answer signal arrives, then run again with that answer, which
          the workflow keeps with an id of its own: every attempt carries it, and it is applied once
    (a workflow started by an older specd, without the PER_STEP patch, runs every step in one `specd_run`)
    cancel signal (kept until acted on): the running step is stopped, an activity marks the task CANCELLED
    and pushes that; Temporal's own cancel does the same

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
from temporalio.common import RetryPolicy, SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError
from temporalio.workflow import ActivityCancellationType

from specd.executors.temporal.job import REFUSED

NAME = "specd-task"
STATUS = SearchAttributeKey.for_keyword("SpecdStatus")  # specd's status, to filter on (WAITING_FOR_HUMAN)
FINAL = ("COMPLETE", "FAILED", "CANCELLED", "BLOCKED")
# Polling the needs is only the fallback: a need that finishes signals its dependants at once.
NEED_POLL = (1.0, 20.0)
PER_STEP = "one-activity-per-step"  # the patch: a workflow that lacks it in its history runs `specd_run`
FIRST = "specd_next"  # the activity that names a task's next step (steps.py)
UNKNOWN = "next step"  # the name of a step no run named (a task whose state names no next step)


class Cancelled(Exception):
    """The cancel signal arrived: the task ends CANCELLED, whatever the workflow was doing."""


@workflow.defn(name=NAME)
class TaskWorkflow:
    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.waits = 0  # how many times the task has waited: the wait an answer names (``answer``)
        self.nudged = False
        self.cancelled: dict[str, Any] | None = None
        self.job: dict[str, Any] = {}

    @workflow.signal
    def answer(self, given: dict[str, Any]) -> None:
        """A held gate's answer: {"answer": "approve" | "reject" | "skip", "note": "...", "by": "who sent it",
        "wait": the wait it answers, as the memo said when it was sent}. An answer to a wait that is over (two
        people answered one gate, the second before the workflow took the first) is dropped, never kept for the
        next gate: each gate is answered by a person who saw it."""
        if given.get("wait") in (None, self.waits):  # None: from a specd that did not name the wait
            self.answers.append(given)

    @workflow.signal
    def cancel(self, given: dict[str, Any] | None = None) -> None:
        """End the task CANCELLED: a running step is stopped first. Kept until acted on, so a cancel that
        arrives between steps, during one or while waiting is never lost, and a second one changes nothing."""
        if self.cancelled is None:
            self.cancelled = dict(given or {})

    @workflow.signal
    def need_finished(self, task: str) -> None:
        self.nudged = True

    @workflow.run
    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        first = job.pop("step", None)  # the first step's name, read by the submitter: for the workflow alone
        self.job = job
        heartbeat = _heartbeat(job.get("heartbeat_timeout"))
        steps = {"start_to_close_timeout": timedelta(days=7), "heartbeat_timeout": heartbeat,
                 "retry_policy": RetryPolicy(initial_interval=timedelta(seconds=1),
                                             maximum_interval=timedelta(seconds=10)),
                 "cancellation_type": ActivityCancellationType.WAIT_CANCELLATION_COMPLETED}
        short = {"start_to_close_timeout": timedelta(seconds=60)}  # a describe or two: no clone, no child
        try:
            await self._after(job, short)
            held = await self._needs(job, short)
            if held:
                return {"task": job["task"], "status": "NOT_STARTED", "reason": "waits for " + ", ".join(held),
                        "waiting_for": held}
            stopped = await self._steps(job, steps, {**short, "start_to_close_timeout": timedelta(minutes=30)},
                                        first if isinstance(first, str) and 0 < len(first) <= 200 else None)
        except (asyncio.CancelledError, ActivityError, Cancelled) as exc:
            if isinstance(exc, ActivityError) and isinstance(exc.cause, ApplicationError) \
                    and exc.cause.type == REFUSED:
                self._status("BLOCKED", exc.cause.message)
                # BLOCKED, not FAILED: a submitter's mismatch is fixed and submitted again (a FAILED task is final)
                raise ApplicationError(exc.cause.message, type=REFUSED, non_retryable=True) from None
            # Temporal's own cancel reaches the workflow as CancelledError, or, while its step ran, as that step's
            # cancellation; specd's cancel is a signal (Cancelled)
            if isinstance(exc, ActivityError) and not isinstance(exc.cause, CancelledError):
                raise
            await self._end_cancelled(job, steps)
            if not isinstance(exc, Cancelled):
                raise
            return {"task": job["task"], "status": "CANCELLED", "reason": "cancelled"}
        self._status(stopped["status"], stopped.get("reason", ""))
        await self._tell_dependants(job)
        return stopped

    async def _steps(self, job: dict[str, Any], options: dict[str, Any], naming: dict[str, Any],
                     first: str | None) -> dict[str, Any]:
        """Run the task one step at a time until it stops; at a gate, hold until an answer (each kept with an id
        of its own, so every attempt that carries it applies it once) or a cancel arrives. The first step's name
        is the submitter's when it sent one, else an activity reads it on the remote's branch."""
        given: dict[str, Any] | None = None
        per_step = workflow.patched(PER_STEP)
        name = (first or await self._name({**job, "answer": None}, naming)) if per_step else "specd_run"
        head: dict[str, str] = {}  # where the last step left the branch, for the step right after it only
        while True:
            self._check()
            self._status("IN_PROGRESS", "")
            stopped = await self._one_run(name, {**job, "answer": given, **head}, options)
            self._check()  # a cancel seen with the step's end was asked before it ended: it wins
            head = {"head": stopped["head"]} if isinstance(stopped.get("head"), str) and stopped["head"] else {}
            stopped.pop("head", None)
            if per_step and stopped["status"] == "IN_PROGRESS":  # one step done: the result names the next
                name, given = str(stopped.get("next") or UNKNOWN), None
                continue
            if stopped["status"] != "WAITING_FOR_HUMAN":
                return stopped
            self.waits += 1
            self.answers = [given for given in self.answers if given.get("wait") is None]  # sent for a wait over
            self._status("WAITING_FOR_HUMAN", stopped.get("reason", ""))
            await self._tell(job.get("next") or [], job)
            await workflow.wait_condition(lambda: bool(self.answers) or self.cancelled is not None)
            self._check()
            taken = {key: value for key, value in self.answers.pop(0).items() if key != "wait"}
            given = {**taken, "id": str(workflow.uuid4())}  # the job's answer: what the person said, and its id
            head = {}  # the next step's clone asks the remote: a person may have pushed the branch meanwhile
            self.answers.clear()  # any other was sent for this same wait: one answer a wait
            if per_step:  # the step the answer leads to: the held one, the one after, or the one sent back to
                name = await self._name({**job, "answer": given}, naming)

    async def _name(self, job: dict[str, Any], options: dict[str, Any]) -> str:
        named: str = await workflow.execute_activity(FIRST, job, **options)
        self._check()
        return named

    def _status(self, status: str, reason: str) -> None:
        """What `specd status` and Temporal's UI show: the memo (with the command that answers a waiting task,
        from anywhere), and the SpecdStatus search attribute when the submitter found it registered (``search``
        in the job: upserting an attribute the server lacks would fail the workflow)."""
        task = self.job.get("task")
        answer = f"specd approve {task} --temporal HOST:PORT [--note TEXT] (or reject --note TEXT, or skip)"
        waiting = status == "WAITING_FOR_HUMAN"
        workflow.upsert_memo({"status": status, "reason": reason, "answer": answer if waiting else None,
                              "wait": self.waits if waiting else None})
        if self.job.get("search"):
            workflow.upsert_search_attributes([STATUS.value_set(status)])

    async def _one_run(self, name: str, job: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """One step's activity (or specd_run's); a cancel during it stops it (it pushes nothing more) and ends
        the task."""
        run = workflow.start_activity(name, job, **options)
        await workflow.wait_condition(lambda: run.done() or self.cancelled is not None)
        if not run.done():
            run.cancel()
            with contextlib.suppress(ActivityError, asyncio.CancelledError):
                await run
            raise Cancelled
        stopped: dict[str, Any] = await run
        return stopped

    def _check(self) -> None:
        if self.cancelled is not None:
            raise Cancelled

    async def _end_cancelled(self, job: dict[str, Any], options: dict[str, Any]) -> None:
        self._status("CANCELLED", "cancelled")
        cancel = {**options, "cancellation_type": ActivityCancellationType.TRY_CANCEL}
        await workflow.execute_activity("specd_cancel", {**job, "answer": None}, **cancel)
        await self._tell_dependants(job)

    async def _needs(self, job: dict[str, Any], options: dict[str, Any]) -> list[str]:
        """[] once every need COMPLETE; the needs that ended otherwise (never to complete without a human)."""
        if not job.get("needs"):
            return []
        wait = NEED_POLL[0]
        while True:
            self._check()
            self._status("WAITING_FOR_NEEDS", "")
            states: dict[str, str] = await workflow.execute_activity("specd_needs", job, **options)
            ended = [need for need, state in states.items() if state not in ("COMPLETE", "RUNNING")]
            if ended:
                return ended
            if all(state == "COMPLETE" for state in states.values()):
                return []
            self.nudged = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self.nudged or self.cancelled is not None,
                                              timeout=timedelta(seconds=wait))
            wait = min(NEED_POLL[1], wait * 2)

    async def _after(self, job: dict[str, Any], options: dict[str, Any]) -> None:
        """-j N across workers: this task starts once the one N places before it in the run has settled."""
        if not job.get("after"):
            return
        wait = NEED_POLL[0]
        while True:
            self._check()
            self._status("WAITING_FOR_NEEDS", "")
            if await workflow.execute_activity("specd_settled", {**job, "task": job["after"]}, **options):
                return
            self.nudged = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self.nudged or self.cancelled is not None,
                                              timeout=timedelta(seconds=wait))
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
