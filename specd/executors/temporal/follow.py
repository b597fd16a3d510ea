"""`specd run --executor temporal --wait`: follow the workflows with the local executor's live view.

Everything comes from describe (status, the memo the workflow keeps, the step its activity heartbeats) and
each closed workflow's result; never a query. Following ends once every task is settled: closed, held at a
gate, or held by a need that is itself settled without completing.

Between two looks it waits POLL, or less: a workflow that closes wakes it at once (a long poll on its history,
for up to WATCH tasks at a time), so a run's end is seen when it happens rather than up to POLL later.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio.client import Client

from specd.executors.local import Listener
from specd.executors.results import Result
from specd.executors.temporal import lookup
from specd.executors.temporal.submit import Submitted
from specd.tasks import graph as graphs
from specd.tasks.project import Project

POLL = 0.5
WATCH = 50  # the most workflows whose close is long-polled at once; the others are seen by POLL


async def follow(client: Client, project: Project, key: str, submitted: list[Submitted],
                 listener: Listener) -> list[Result]:
    graph = graphs.load(project)
    seen: dict[str, dict[str, Any]] = {}
    settled: dict[str, Result] = {s.task: Result(s.task, s.status) for s in submitted if s.how in ("done-here",
                                                                                                    "final")}
    for task in settled:
        seen[task] = {"status": settled[task].status}
    closing: dict[str, asyncio.Future[None]] = {}
    while len(settled) < len(submitted):
        for item in submitted:
            if item.task in settled:
                continue
            found = await lookup.state(client, key, item.task) or {"running": True, "status": "SUBMITTED"}
            if await _answer_pending(client, key, item.task, found):
                found = {**found, "status": "IN_PROGRESS"}  # as the workflow will say once it takes the answer up
            _report(listener, item.task, seen.get(item.task), found)
            seen[item.task] = found
        for item in submitted:
            if item.task not in settled:
                result = _settled(item.task, seen, settled, graph)
                if result is not None:
                    settled[item.task] = result
                    listener(item.task, {"kind": "task_finished", "status": result.status, "reason": result.reason,
                                         **({"waiting_for": list(result.waiting_for)} if result.waiting_for else {})})
        if len(settled) < len(submitted):
            await _pause(client, key, [s.task for s in submitted if s.task not in settled], closing)
    for watch in closing.values():
        watch.cancel()
    return [settled[s.task] for s in submitted]


async def _pause(client: Client, key: str, open_: list[str], closing: dict[str, asyncio.Future[None]]) -> None:
    """POLL, or until one of the first WATCH open workflows closes. A watch that ended (its workflow closed, or
    the long poll failed) is not made again: that task is then looked at every POLL."""
    for task in open_[:WATCH]:
        if task not in closing:
            closing[task] = asyncio.ensure_future(_closed(client, key, task))
    pending = [watch for watch in closing.values() if not watch.done()]
    timer = asyncio.ensure_future(asyncio.sleep(POLL))
    await asyncio.wait([timer, *pending], return_when=asyncio.FIRST_COMPLETED)
    timer.cancel()


async def _closed(client: Client, key: str, task: str) -> None:
    """Returns once the task's workflow has closed, however it ended (or the long poll could not go on)."""
    with contextlib.suppress(Exception):
        await lookup.handle(client, key, task).result()


async def _answer_pending(client: Client, key: str, task: str, found: dict[str, Any]) -> bool:
    """The workflow waits, but its wait was answered already (a signal in its history no worker has acted on yet:
    its memo still says waiting). Not settled: followed until a worker takes the answer up."""
    if not found["running"] or found["status"] != "WAITING_FOR_HUMAN":
        return False
    from specd.executors.temporal.signals import answered

    return await answered(client, lookup.handle(client, key, task), found.get("wait")) is not None


def _report(listener: Listener, task: str, before: dict[str, Any] | None, now: dict[str, Any]) -> None:
    if now["running"] and now["status"] == "IN_PROGRESS" and (before is None or before["status"] != "IN_PROGRESS"):
        listener(task, {"kind": "task_started", "worktree": "a Temporal worker"})
    if now.get("step") and (before is None or before.get("step") != now["step"]):
        listener(task, {"kind": "step_started", "step": now["step"]})


def _settled(task: str, seen: dict[str, dict[str, Any]], settled: dict[str, Result],
             graph: graphs.Graph) -> Result | None:
    found = seen[task]
    if not found["running"]:
        return Result(task, str(found["status"]), str(found.get("reason") or ""),
                      tuple(found.get("waiting_for") or ()))
    if found["status"] == "WAITING_FOR_HUMAN":
        return Result(task, "WAITING_FOR_HUMAN", str(found.get("reason") or ""))
    if found["status"] == "WAITING_FOR_NEEDS":
        stuck = tuple(n for n in graph.get(task, ()) if n in settled and settled[n].status != "COMPLETE")
        if stuck:
            return Result(task, "NOT_STARTED", "waits for " + ", ".join(stuck), stuck)
    return None
