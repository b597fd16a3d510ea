"""The activities: everything that touches files, git or an agent, on a worker, in that worker's clone.

``specd_run`` brings the task's clone to the remote's branch (needs merged in), applies a held gate's answer
as `specd approve/reject/skip` would (once: see answered.py), then runs `specd continue TASK --json` there as a
child process (the seam, with the same agents, jail, budgets and redaction as a local run). The run pushes each
step commit before its next step starts, and the activity heartbeats the current step on a timer for its whole
life (clone, push and step alike), so a dead worker is noticed within the heartbeat timeout and the step runs
again elsewhere from the last pushed commit. A step's own activity (steps.py) does the same for one step: the
child gets SPECD_STEPS=1, its result names the next step, and it waits here for that step (parked.py).

One attempt of a task at a time on a worker: an older attempt still running here (Temporal holds it dead: its
heartbeats were late), and every run of the task still ending, is stopped before the new one touches the clone
(runs.py), and never pushes. On another worker it cannot be stopped, so each attempt holds a lease its heartbeat
timer renews (lease.py): once a renewal comes late, its child pushes nothing more and the result is not used.

Every activity first verifies its job (``job.verify``): task, key, needs, never how to run (agent, mode and
--max-cost are the worker's own). One that fails is refused for good, naming field and rule; nothing is cloned.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from specd.engine import control, seam
from specd.executors.temporal import answered, attempt, budget, clones, runs
from specd.executors.temporal import parked as parked_runs
from specd.executors.temporal.job import REFUSED, Job, JobRefused, verify, within
from specd.executors.temporal.lease import Lease
from specd.executors.temporal.parked import LIMIT, Parked, Parking
from specd.executors.temporal.settings import Behaviour
from specd.executors.temporal.steps import StepActivities, refused, result
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
        self.parking = Parking()  # runs waiting for their task's next step here (parked.py)
        self.runs = runs.Runs()  # every run started here, until it is gone

    def stop_all(self) -> None:
        """The worker is stopping: every child saves its state and ends ABORTED (nothing is pushed); a parked one
        just ends."""
        self.parking.stop_all()
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
        if activity.info().attempt > 1:  # the attempt before may have pushed (its result lost): ask the remote
            if await attempt.cancel_asked():  # the workflow may not have seen it yet
                return {"task": job.task, "status": "CANCELLED", "reason": "cancelled"}
            job = replace(job, head="")
        key = job.here
        slot = self.slots.setdefault(key, _Slot())
        slot.latest += 1
        mine, beat = slot.latest, {"step": ""}
        if slot.proc is not None:  # an older attempt still runs here: Temporal has given up on it
            if slot.lease is not None:
                slot.lease.give_up()
            await asyncio.to_thread(attempt.stop, slot.proc)
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
            threading.Thread(target=attempt.stop, args=(slot.proc,), daemon=True).start()

    async def _attempt(self, job: Job, slot: _Slot, mine: int, beat: dict[str, str], lease: Lease,
                       one: bool) -> dict[str, Any]:
        def current() -> None:
            if slot.latest != mine or not lease.held():
                raise Superseded

        task, key = job.task, job.here
        parked = self.parking.take(key)  # the run of this task's last step here, if it waits
        try:
            await self.runs.settle(key, keep=parked.proc if parked is not None else None)
            current()
            # from the remote's branch, always: a commit this clone never pushed may be a superseded attempt's
            clone = await asyncio.to_thread(self._clone, job, job.needs, parked)
            # the worker's --max-cost; with the run's budget, what the whole run has left when that is less
            cap = await asyncio.to_thread(budget.cap, clone.path, task, job.budget, self.own.max_cost)
            if parked is not None and (job.answer or not one or not clone.kept or cap != parked.cap):
                await parked_runs.ended(parked)  # an answer, a moved clone or budget: a fresh run reads the files
                parked = None
            if job.answer:  # sent from another clone; who sent it came with the signal
                said = await asyncio.to_thread(answered.apply, Project(clone.path), task, job.answer, job.answer_id)
                activity.logger.info("%s: %s", task, said)
            current()
            stopped, parked = await self._continue(clone, job, cap, slot, beat, lease, one, parked)
            current()  # before the agent's result is used, and before the last push
            stopped["head"] = await asyncio.to_thread(clones.push, clone)  # the next step's clone is checked by it
            if parked is not None:  # pushed: its next step may go on from here
                self.parking.park(key, parked)
                parked = None
        except JobRefused as exc:
            raise self._refused(exc) from None
        except clones.Refused as exc:
            return {"task": task, "status": "BLOCKED", "reason": str(exc)}
        except OSError as exc:  # git or the disk on this worker: another worker may do better
            raise ApplicationError(str(exc)) from None
        finally:
            if parked is not None:  # not handed on: it ends, from a thread (this may be a cancel)
                threading.Thread(target=parked.end, daemon=True).start()
        return stopped

    async def _unpark(self, job: Job) -> None:  # before anything else touches the clone: every run there ends
        await parked_runs.ended(self.parking.take(job.here))
        await self.runs.settle(job.here)

    def _clone(self, job: Job, needs: tuple[str, ...], parked: Parked | None = None) -> clones.Clone:
        clone = clones.prepare(self.workdir, self.remote, job.key, job.task, list(needs),
                               parked.end if parked is not None else lambda: None, job.head)
        for folder in ("tasks", "features"):  # where the child looks for the task: a symlink out is refused
            within(clone.path, ".specd", folder, job.task)
        return clone

    async def _continue(self, clone: clones.Clone, job: Job, cap: float | None, slot: _Slot, beat: dict[str, str],
                        lease: Lease, one: bool, parked: Parked | None) -> tuple[dict[str, Any], Parked | None]:
        """The step's run (``parked`` woken, else a fresh one) until it stops: its result, and the run itself
        when it waits for the next step (the caller parks it once it pushed)."""
        loop, lines = asyncio.get_running_loop(), asyncio.Queue[attempt.Line]()
        proc = await parked_runs.wake(parked, loop, lines) if parked is not None else None
        if parked is not None and proc is not None:
            errors, feed = parked.errors, parked.feed
        else:
            errors, feed = tempfile.TemporaryFile(), attempt.Feed(loop, lines)  # noqa: SIM115 (closed below)
            proc = await self._start(clone, job, cap, lease, one, errors)
            threading.Thread(target=attempt.read, args=(proc, feed), daemon=True).start()
        since = errors.seek(0, os.SEEK_END)  # this step's own words on stderr start here
        self.running.add(proc)
        slot.proc, slot.lease = proc, lease
        step, finished, waits = "", {}, False
        try:
            while (event := await lines.get()) is not None:
                kind = event.get("kind")
                if kind == "step_started":
                    step = beat["step"] = str(event.get("step") or step)
                    activity.heartbeat(dict(beat))
                if kind == "run_finished":
                    finished = event
                if kind == "run_parked":  # committed and saved: it waits for the next step
                    waits = True
                    break
        except asyncio.CancelledError as exc:
            lease.give_up()  # cancelled, or the worker stops: the child saves, ends ABORTED, and pushes nothing
            await attempt.stopped(proc)
            raise self._cancelled(exc, job, step, lease, errors) from None
        finally:
            self.running.discard(proc)
            if slot.proc is proc:
                slot.proc, slot.lease = None, None
        if waits:
            held = Parked(proc, feed, errors, cap)
            if not lease.held():
                await asyncio.to_thread(held.end)
                raise Superseded
            return result(job.task, finished, step), held
        with errors:
            errors.seek(since)
            said = errors.read().decode("utf-8", "replace").strip()
        code = await asyncio.to_thread(proc.wait)
        children.ended(proc.pid)
        if not lease.held():
            raise Superseded
        if activity.is_worker_shutdown() or (not finished and code == 130):
            raise ApplicationError(f"{job.task}: the worker stopped in the middle of step {step or '?'}; "
                                   "it runs again on another worker")
        return (result(job.task, finished, step) if finished else refused(job.task, said, code)), None

    async def _start(self, clone: clones.Clone, job: Job, cap: float | None, lease: Lease, one: bool,
                     errors: IO[bytes]) -> attempt.Proc:
        # how it runs is this worker's own; of the job, only the task (checked) reaches the command line
        argv = ["--project", str(clone.path), "continue", job.task, "--json"]
        argv += [f"--{self.own.mode}"] if self.own.mode else []
        argv += ["--agent", self.own.agent] if self.own.agent else []
        argv += ["--max-cost", f"{cap:.6f}"] if cap is not None else []
        # One step (SPECD_STEPS=1): the run stops IN_PROGRESS naming the next and waits (SPECD_PARK); this activity
        # pushes the step's commits once, together, after checking the lease. Every step of an older workflow's
        # `specd_run` (SPECD_GIT_PUSH): the run pushes each step commit itself, before its next step, under the lease.
        env = {publish.LEASE: str(lease.path),
               **({seam.STEPS: "1", seam.PARK: f"{LIMIT}:{os.getpid()}"} if one else {"SPECD_GIT_PUSH": "origin"})}
        try:
            proc = await attempt.start(argv, clone.path, env, errors, lambda fork: self.runs.forked(job.here, fork))
            self.runs.started(job.here, proc)
            return proc
        except asyncio.CancelledError as exc:
            raise self._cancelled(exc, job, "", lease, errors) from None

    def _cancelled(self, exc: asyncio.CancelledError, job: Job, step: str, lease: Lease, errors: IO[bytes]
                   ) -> BaseException:
        """What a cancelled attempt raises: the cancel itself, or, when the worker stops, a failure (not a cancel)
        that Temporal retries elsewhere. Its lease is given up first: its child pushes nothing."""
        lease.give_up()
        errors.close()
        if activity.is_worker_shutdown():
            return ApplicationError(f"{job.task}: the worker stopped during step {step or '?'}")
        return exc

    @activity.defn(name="specd_cancel")
    async def cancel(self, raw: dict[str, Any]) -> str:
        """Mark the task CANCELLED where everyone reads it: on the remote's branch."""
        job = self._verified(raw)
        task = job.task
        ticker = asyncio.create_task(attempt.beat({"step": "cancel"}, None, lambda: None))
        try:
            await self._unpark(job)
            clone = await asyncio.to_thread(self._clone, job, ())
            # a workflow's cancel carries no data: from another clone, by someone it cannot name; the cancel commits
            # its record (`run state CANCELLED`), which is pushed
            said = await asyncio.to_thread(control.cancel, Project(clone.path), task, Origin("clone"))
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
