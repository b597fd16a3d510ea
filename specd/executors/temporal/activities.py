"""The activities: everything that touches files, git or an agent, on a worker, in that worker's clone.

``specd_run`` brings the task's clone to the remote's branch (needs merged in), applies a held gate's answer
as `specd approve/reject/skip` would (once: see answered.py), then runs `specd continue TASK --json` there as a
child process (the seam, with the same agents, jail, budgets and redaction as a local run). The run pushes each
step commit before its next step starts, and the activity heartbeats the current step on a timer for its whole
life (clone, push and step alike), so a dead worker is noticed within the heartbeat timeout and the step runs
again elsewhere from the last pushed commit. A step's own activity (steps.py) does the same for one step: the
child gets SPECD_STEPS=1, and its result names the next step.

One attempt of a task at a time on a worker: Temporal starts a new attempt only once it holds the last one dead,
so an older attempt still running here (its heartbeats were late) is stopped, and never pushes, before the new
one touches the clone they share. On another worker it cannot be stopped, so each attempt holds a lease its
heartbeat timer renews (lease.py): once a renewal comes late, its child pushes nothing more and stops, and the
attempt's result is not used.

Every activity first verifies its job (``job.verify``): the task, key and needs it names, and nothing of how to
run. The agent, mode and --max-cost of the child are this worker's own. A job that fails is refused as a
non-retryable error naming the field and the rule, logged here, and nothing is cloned, run or touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from specd.engine import control, seam
from specd.executors.temporal import answered, attempt, budget, clones
from specd.executors.temporal.job import REFUSED, Job, JobRefused, verify, within
from specd.executors.temporal.lease import Lease
from specd.executors.temporal.settings import Behaviour
from specd.executors.temporal.steps import StepActivities, label
from specd.git import publish
from specd.state.checkpoint import Origin
from specd.system import children
from specd.tasks.project import Project


@dataclass
class _Slot:
    """One task on this worker: the attempt allowed to touch its clone, and that attempt's child."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    latest: int = 0
    proc: attempt.Proc | None = None
    lease: Lease | None = None  # the running attempt's: given up before it is stopped


class Superseded(Exception):
    """A later attempt of the same task started on this worker, or this attempt's lease lapsed (its heartbeats
    came late, so Temporal may have started another elsewhere): this one stops and pushes nothing."""


class Activities(StepActivities):
    def __init__(self, workdir: Path, remote: str, own: Behaviour | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.workdir, self.remote, self.own = workdir, remote, own or Behaviour()
        self.say = say or activity.logger.warning
        self.running: set[attempt.Proc] = set()
        self.leases: set[Lease] = set()
        self.slots: dict[str, _Slot] = {}

    def stop_all(self) -> None:
        """The worker is stopping: every child saves its state and ends ABORTED (nothing is pushed)."""
        for lease in list(self.leases):
            lease.give_up()
        for proc in list(self.running):
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)

    def _verified(self, raw: Any) -> Job:
        try:
            return verify(raw, self.own)
        except JobRefused as exc:
            raise self._refused(exc) from None

    def _refused(self, exc: JobRefused) -> ApplicationError:
        info = activity.info()
        self.say(f"refused a job ({info.activity_type} of workflow {info.workflow_id}): {exc}; nothing was cloned "
                 "or run")
        # BENIGN: the SDK logs it at debug level, without a traceback; the line above is the worker's word on it
        return ApplicationError(f"the worker refused this job: {exc}", type=REFUSED, non_retryable=True,
                                category=ApplicationErrorCategory.BENIGN)

    @activity.defn(name="specd_run")
    async def run(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Every step until the task stops (a workflow started by an older specd); steps.py runs one at a time."""
        return await self._run(raw, one=False)

    async def _run(self, raw: Any, *, one: bool) -> dict[str, Any]:
        job = self._verified(raw)
        if activity.info().attempt > 1 and await attempt.cancel_asked():  # the workflow may not have seen it yet
            return {"task": job.task, "status": "CANCELLED", "reason": "cancelled"}
        key = f"{job.key}/{job.task}"
        slot = self.slots.setdefault(key, _Slot())
        slot.latest += 1
        mine, beat = slot.latest, {"step": ""}
        if slot.proc is not None:  # an older attempt still runs here: Temporal has given up on it
            if slot.lease is not None:
                slot.lease.give_up()
            await asyncio.to_thread(self._stop, slot.proc)
        lease = self._lease()
        ticker = asyncio.create_task(attempt.beat(beat, lease, lambda: self._lapsed(slot, lease)))
        try:
            async with slot.lock:
                return await self._attempt(job, slot, mine, beat, lease, one)
        except Superseded:
            raise ApplicationError(f"{job.task}: this attempt was superseded (a later attempt took over on this "
                                   "worker, or its lease lapsed); it pushed nothing more") from None
        finally:
            ticker.cancel()
            self.leases.discard(lease)
            lease.close()
            if slot.latest == mine and self.slots.get(key) is slot:  # the last attempt here: a long-lived worker
                del self.slots[key]  # keeps no slot per task it ever ran

    def _lease(self) -> Lease:
        length = (activity.info().heartbeat_timeout or timedelta(seconds=30)).total_seconds() / 2
        lease = Lease(self.workdir / ".leases", length)
        self.leases.add(lease)
        return lease

    def _lapsed(self, slot: _Slot, lease: Lease) -> None:
        """The lease lapsed: the child (if this attempt's) stops now, and pushes nothing."""
        lease.give_up()
        if slot.lease is lease and slot.proc is not None:
            threading.Thread(target=self._stop, args=(slot.proc,), daemon=True).start()

    async def _attempt(self, job: Job, slot: _Slot, mine: int, beat: dict[str, str], lease: Lease,
                       one: bool) -> dict[str, Any]:
        def current() -> None:
            if slot.latest != mine or not lease.held():
                raise Superseded

        task = job.task
        try:
            current()
            # from the remote's branch, always: a commit this clone never pushed may be a superseded attempt's
            clone = await asyncio.to_thread(self._clone, job, job.needs)
            if job.answer:  # sent from another clone; who sent it came with the signal
                said = await asyncio.to_thread(answered.apply, Project(clone.path), task, job.answer, job.answer_id)
                activity.logger.info("%s: %s", task, said)
            # the worker's --max-cost; with the run's budget, what the whole run has left when that is less
            cap = await asyncio.to_thread(budget.cap, clone.path, task, job.budget, self.own.max_cost)
            current()
            stopped = await self._continue(clone, job, cap, slot, beat, lease, one)
            current()  # before the agent's result is used, and before the last push
            await asyncio.to_thread(clones.push, clone)
        except JobRefused as exc:
            raise self._refused(exc) from None
        except clones.Refused as exc:
            return {"task": task, "status": "BLOCKED", "reason": str(exc)}
        except OSError as exc:  # git or the disk on this worker: another worker may do better
            raise ApplicationError(str(exc)) from None
        return stopped

    def _clone(self, job: Job, needs: tuple[str, ...]) -> clones.Clone:
        clone = clones.prepare(self.workdir, self.remote, job.key, job.task, list(needs))
        for folder in ("tasks", "features"):  # where the child looks for the task: a symlink out is refused
            within(clone.path, ".specd", folder, job.task)
        return clone

    async def _continue(self, clone: clones.Clone, job: Job, cap: float | None, slot: _Slot,
                        beat: dict[str, str], lease: Lease, one: bool) -> dict[str, Any]:
        # how it runs is this worker's own; of the job, only the task (checked) reaches the command line
        argv = ["--project", str(clone.path), "continue", job.task, "--json"]
        argv += [f"--{self.own.mode}"] if self.own.mode else []
        argv += ["--agent", self.own.agent] if self.own.agent else []
        argv += ["--max-cost", f"{cap:.6f}"] if cap is not None else []
        loop, lines = asyncio.get_running_loop(), asyncio.Queue[attempt.Line]()
        errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed below); outside the clone: never committed
        # One step (SPECD_STEPS=1): the run stops IN_PROGRESS naming the next, and this activity pushes the step's
        # commits once, together, after checking the lease. Every step of an older workflow's `specd_run`
        # (SPECD_GIT_PUSH): the run pushes each step commit itself, before its next step starts, under the lease.
        env = {publish.LEASE: str(lease.path), **({seam.STEPS: "1"} if one else {"SPECD_GIT_PUSH": "origin"})}
        try:
            proc = await attempt.start(argv, clone.path, env, errors)
        except asyncio.CancelledError as exc:
            raise self._cancelled(exc, job, "", lease, errors) from None
        self.running.add(proc)
        slot.proc, slot.lease = proc, lease
        threading.Thread(target=attempt.read, args=(proc, loop, lines), daemon=True).start()
        step, finished = "", {}
        try:
            while (event := await lines.get()) is not None:
                kind = event.get("kind")
                if kind == "step_started":
                    step = beat["step"] = str(event.get("step") or step)
                    activity.heartbeat(dict(beat))
                if kind == "run_finished":
                    finished = event
        except asyncio.CancelledError as exc:
            lease.give_up()  # cancelled, or the worker stops: the child saves, ends ABORTED, and pushes nothing
            self._stop(proc)
            raise self._cancelled(exc, job, step, lease, errors) from None
        finally:
            self.running.discard(proc)
            if slot.proc is proc:
                slot.proc, slot.lease = None, None
        with errors:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip()
        code = await asyncio.to_thread(proc.wait)
        children.ended(proc.pid)
        if not lease.held():
            raise Superseded
        if activity.is_worker_shutdown() or (not finished and code == 130):
            raise ApplicationError(f"{job.task}: the worker stopped in the middle of step {step or '?'}; "
                                   "it runs again on another worker")
        if not finished:
            return {"task": job.task, "status": "BLOCKED" if code != 2 else "FAILED",
                    "reason": said.splitlines()[-1] if said else f"specd continue exited with {code}"}
        return {"task": job.task, "status": str(finished.get("status")), "reason": str(finished.get("reason") or ""),
                "step": step, **({"next": label(finished.get("next"))} if finished.get("next") else {})}

    def _cancelled(self, exc: asyncio.CancelledError, job: Job, step: str, lease: Lease, errors: IO[bytes]
                   ) -> BaseException:
        """What a cancelled attempt raises: the cancel itself, or, when the worker stops, a failure (not a cancel)
        that Temporal retries elsewhere. Its lease is given up first: its child pushes nothing."""
        lease.give_up()
        errors.close()
        if activity.is_worker_shutdown():
            return ApplicationError(f"{job.task}: the worker stopped during step {step or '?'}")
        return exc

    def _stop(self, proc: attempt.Proc) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        children.ended(proc.pid)

    @activity.defn(name="specd_cancel")
    async def cancel(self, raw: dict[str, Any]) -> str:
        """Mark the task CANCELLED where everyone reads it: on the remote's branch."""
        job = self._verified(raw)
        task = job.task
        ticker = asyncio.create_task(attempt.beat({"step": "cancel"}, None, lambda: None))
        try:
            clone = await asyncio.to_thread(self._clone, job, ())
            # a workflow's cancel carries no data: from another clone, by someone it cannot name
            said = await asyncio.to_thread(control.cancel, Project(clone.path), task, Origin("clone"))
            folder = str(Path(".specd") / "tasks" / task)
            await asyncio.to_thread(clones.commit_folder, clone, folder, f"docs({task}): run state CANCELLED")
            await asyncio.to_thread(clones.push, clone)
        except JobRefused as exc:
            raise self._refused(exc) from None
        except clones.Overtaken as exc:  # a superseded attempt's last push: again, from the remote's branch
            raise ApplicationError(str(exc)) from None
        except (clones.Refused, OSError) as exc:
            return f"cancelled; the task branch was not updated: {exc}"
        finally:
            ticker.cancel()
        return said
