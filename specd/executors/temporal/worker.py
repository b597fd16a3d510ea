"""`specd worker`: poll the task queue and run specd's activities (and workflow tasks) on this machine.

Each task gets its own clone under the workdir. How a task runs (agent, mode, --max-cost) is this worker's own,
from its command line (``settings.Behaviour``); a job only names the task. SIGTERM or Ctrl-C stops cleanly: a
running step's child saves its state and ends ABORTED, the activity fails as "worker stopped", and Temporal runs
the step again on another worker from the last pushed commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from specd.executors import warm
from specd.executors.temporal import lookup, search
from specd.executors.temporal.activities import Activities
from specd.executors.temporal.seed import RemoteError, git_said
from specd.executors.temporal.settings import Behaviour, Settings
from specd.executors.temporal.workflow import TaskWorkflow
from specd.git.repo import git


def check_remote(remote: str) -> None:
    done = git(Path.cwd(), "ls-remote", "--heads", remote)
    if done.returncode != 0:
        raise RemoteError(f"the worker cannot read the shared remote {remote}: "
                          f"{git_said(done, 'git ls-remote failed')}",
                          fix="pass --remote URL naming the repository the tasks were submitted to")


def throttle(timeout: float) -> timedelta:
    """How often a step's heartbeat reaches the server. The SDK's own default, 0.8 of the timeout, leaves a
    loaded machine a fifth of it before a live step is taken for dead and started again elsewhere."""
    return timedelta(seconds=max(0.5, min(10.0, timeout / 4)))


async def serve(settings: Settings, own: Behaviour, remote: str, workdir: Path, jobs: int,
                say: Callable[[str], None]) -> None:
    check_remote(remote)
    client = await lookup.connect(settings)
    if not await search.ensure(client, settings.namespace):
        say(f"the namespace has no {search.NAME} search attribute and this worker may not add it: tasks show their "
            f"status in the memo only; {search.HOW}")
    workdir.mkdir(parents=True, exist_ok=True)
    activities = Activities(workdir.resolve(), remote, own, say)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    # The workflow module is pure; passing specd through keeps the sandbox from re-importing the package.
    runner = SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("specd"))
    worker = Worker(client, task_queue=settings.task_queue, workflows=[TaskWorkflow],
                    activities=[activities.run, activities.step, activities.first, activities.cancel,
                                activities.needs, activities.settled],
                    workflow_runner=runner,
                    max_concurrent_activities=jobs, graceful_shutdown_timeout=timedelta(seconds=0),
                    max_heartbeat_throttle_interval=throttle(settings.heartbeat_timeout),
                    # a dead worker's workflows (a cancel, an answer) move to another worker this soon
                    sticky_queue_schedule_to_start_timeout=throttle(settings.heartbeat_timeout) * 2)
    with contextlib.suppress(OSError):  # the steps' warm parent (attempt.start), from this main thread: it
        warm.shared()  # imports specd while the worker connects; without it, each step starts a fresh Python
    try:
        async with worker:
            say(f"worker polling {settings.task_queue!r} at {settings.address} (namespace {settings.namespace}), "
                f"up to {jobs} step(s) at once, clones in {workdir}; {_runs(own)}")
            await stopping.wait()
            say("stopping: the running steps end ABORTED and run again on another worker")
            activities.stop_all()
    finally:
        warm.close_shared()  # once every step's run has ended: the runs die with it


def _runs(own: Behaviour) -> str:
    """How every task runs here, said once at start: no job changes it."""
    agent = "this worker's --agent" if own.agent else "the run's or the pipeline's agent"
    mode = f"--{own.mode}" if own.mode else "the run's or the pipeline's mode"
    cost = f"--max-cost {own.max_cost:g} a task" if own.max_cost is not None else "the run's or the pipeline's budget"
    return f"every task runs with {agent}, {mode} and {cost}; a job names only its task"
