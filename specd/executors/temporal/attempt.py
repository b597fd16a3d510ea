"""What every attempt of a step does beside running it: heartbeat (renewing its lease), read its child's events,
and, on a retry, look whether the workflow was asked to cancel.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.service import RPCError

from specd.executors.temporal.lease import Lease

Line = dict[str, Any] | None


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


def read(proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[Line]) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, dict) and "kind" in event:
            loop.call_soon_threadsafe(lines.put_nowait, event)
    loop.call_soon_threadsafe(lines.put_nowait, None)
