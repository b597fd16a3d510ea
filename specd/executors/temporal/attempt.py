"""What every attempt of a step does beside running it: start its child, heartbeat (renewing its lease), read the
child's events, and, on a retry, look whether the workflow was asked to cancel.

The child is forked from the worker's warm zygote (``executors.warm``, as the local executor's runs are): a fresh
Python spent about 0.3 s of every step importing specd before the step began. It is still a process of its own,
in a session of its own, that dies with the worker, so stopping it, a lapsed lease and a killed worker treat it
as before; only the interpreter's start-up is shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from temporalio import activity
from temporalio.service import RPCError

from specd.agents.proc import popen_child
from specd.executors import warm
from specd.executors.temporal.lease import Lease
from specd.system import children

Line = dict[str, Any] | None
Proc = subprocess.Popen[bytes] | warm.Forked


async def start(args: list[str], cwd: Path, env: dict[str, str], errors: IO[bytes],
                forked: Callable[[asyncio.Future[warm.Forked]], None] = lambda _: None) -> Proc:
    """`specd ARGS` in ``cwd`` with ``env`` added to the worker's environment, forked from the warm zygote; a
    fresh Python when no zygote can be had (it could not start, or died). Call on the worker's main thread,
    which the zygote (or the fresh child) dies with. The fork is asked for from a thread: a zygote still warming
    up must not hold back this attempt's heartbeats and lease; ``forked`` is told of the fork as it is asked for
    (runs.py: the run exists even if this attempt stops before it is told)."""
    try:
        zygote = warm.shared()
        # the environment a started child would get: the worker's as it is now, and the run's owner marker
        environ = children.child_env({**os.environ, **env})
        forking = asyncio.ensure_future(asyncio.to_thread(zygote.spawn, args, cwd, errors, environ))
        forked(forking)
        try:
            return await asyncio.shield(forking)
        except asyncio.CancelledError:  # the attempt is stopped: so is its run, once it exists
            forking.add_done_callback(_stop_once_forked)
            raise
    except OSError:
        return popen_child([sys.executable, "-m", "specd", *args], env={**os.environ, **env}, cwd=cwd,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)


def _stop_once_forked(forking: asyncio.Future[warm.Forked]) -> None:
    """The run an attempt asked for after the attempt was stopped: stopped too (it saves its state and ends
    ABORTED; its lease is given up, so nothing is pushed), and reaped from a thread of its own."""
    if forking.cancelled() or forking.exception() is not None:
        return
    run = forking.result()
    with contextlib.suppress(ProcessLookupError):
        os.kill(run.pid, signal.SIGTERM)

    def reap() -> None:
        run.wait()
        children.ended(run.pid)

    threading.Thread(target=reap, daemon=True).start()


def stop(proc: Proc) -> None:
    """SIGTERM the run (it saves its state and ends ABORTED; a parked one just ends) and reap it; one already
    reaped is not signalled (its pid may be another process's by now)."""
    if alive(proc):
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    children.ended(proc.pid)


async def stopped(proc: Proc) -> None:
    """``stop`` from a thread, waited for even if this task is cancelled again: the worker's event loop, which
    heartbeats every other attempt here, must never wait for a run to save and end (up to 30 s)."""
    stopping = asyncio.ensure_future(asyncio.to_thread(stop, proc))
    while not stopping.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(stopping)


async def cancel_asked() -> bool:
    """Whether this workflow was asked to cancel: a retry must not run a step the cancel was meant to stop,
    though a dead worker may hold the workflow's own next move for a while. Read from its history, on a retry
    only (a first attempt was scheduled by a workflow that had seen every signal before it)."""
    info = activity.info()
    if not info.workflow_id:
        return False
    handle = activity.client().get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)
    try:
        async for event in handle.fetch_history_events():
            signal = event.workflow_execution_signaled_event_attributes
            if event.HasField("workflow_execution_cancel_requested_event_attributes") or (
                    event.HasField("workflow_execution_signaled_event_attributes") and signal.signal_name == "cancel"):
                return True
    except RPCError:
        return False  # unknown: the workflow's own cancel still stops the step at its next heartbeat
    return False


async def beat(beat: dict[str, str], lease: Lease | None, lapsed: Callable[[], None]) -> None:
    """Heartbeat on a timer, whatever the child prints or how long git takes: only a dead or frozen worker goes
    silent. The lease is renewed with each heartbeat; once a renewal comes late, ``lapsed`` is called."""
    every = min(1.0, (activity.info().heartbeat_timeout or timedelta(seconds=6)).total_seconds() / 6)
    while True:
        activity.heartbeat(dict(beat))
        if lease is not None and not lease.renew():
            lapsed()
            return
        await asyncio.sleep(every)


class Feed:
    """Where a run's events go: the queue of the activity that runs it now. A run parked between steps is taken
    over by the next step's activity (parked.py), which points its feed at its own queue before waking it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[Line]) -> None:
        self._lock = threading.Lock()
        self._to, self._ended = (loop, lines), False

    def to(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[Line]) -> None:
        """From now on into ``lines``; at once the end (None) if the output already ended."""
        with self._lock:
            self._to = (loop, lines)
            if self._ended:
                lines.put_nowait(None)  # called on the loop's own thread

    def put(self, line: Line) -> None:
        with self._lock:
            loop, lines = self._to
            self._ended = self._ended or line is None
            with contextlib.suppress(RuntimeError):  # the loop closed (the worker stopped): nobody listens
                loop.call_soon_threadsafe(lines.put_nowait, line)


def alive(proc: Proc) -> bool:
    """Whether the run has not ended (and been reaped): only then may it be signalled by its pid."""
    return proc.returncode is None if isinstance(proc, warm.Forked) else proc.poll() is None


def read(proc: Proc, feed: Feed) -> None:
    """The run's events, from a thread of their own, until its output ends (then None)."""
    assert proc.stdout is not None
    with proc.stdout:
        for raw in proc.stdout:
            try:
                event = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, dict) and "kind" in event:
                feed.put(event)
    feed.put(None)
