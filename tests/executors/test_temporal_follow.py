"""`specd run --executor temporal --wait` between two looks: a workflow that closes ends the wait at once.

A fake client stands in for Temporal (no server): its handles' ``result()`` returns when the test closes that
workflow. POLL is set to an hour, so a wait that did not wake on the close would never end in time; the
test's own timeout is only a safety net.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("temporalio")  # the dev extra installs it; CI fails loudly elsewhere when it is missing

from specd.executors.temporal import follow  # noqa: E402
from specd.executors.temporal.ids import workflow_id  # noqa: E402

SAFETY = 60.0


class Handle:
    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.polls = 0

    async def result(self) -> Any:
        self.polls += 1
        await self.closed.wait()
        raise RuntimeError("the workflow failed")  # however it ended: the wait ends all the same


class Client:
    def __init__(self, tasks: list[str]) -> None:
        self.handles = {workflow_id("k", task): Handle() for task in tasks}

    def get_workflow_handle(self, workflow: str) -> Handle:
        return self.handles[workflow]


def test_a_closing_workflow_ends_the_wait_and_its_watch_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "POLL", 3600.0)
    client = Client(["a", "b"])
    a, b = (client.handles[workflow_id("k", task)] for task in ("a", "b"))

    async def scenario() -> dict[str, asyncio.Future[None]]:
        closing: dict[str, asyncio.Future[None]] = {}
        waiting = asyncio.ensure_future(follow._pause(client, "k", ["a", "b"], closing))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        assert not waiting.done()
        b.closed.set()
        await asyncio.wait_for(waiting, SAFETY)  # woken by b's close, not by the hour
        again = asyncio.ensure_future(follow._pause(client, "k", ["a"], closing))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        a.closed.set()
        await asyncio.wait_for(again, SAFETY)
        return closing

    closing = asyncio.run(scenario())
    assert set(closing) == {"a", "b"}
    assert (a.polls, b.polls) == (1, 1)  # a watch lives across waits: one long poll per workflow


def test_only_the_first_watch_tasks_are_long_polled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "POLL", 0.0)
    monkeypatch.setattr(follow, "WATCH", 2)
    client = Client(["a", "b", "c"])

    async def scenario() -> dict[str, asyncio.Future[None]]:
        closing: dict[str, asyncio.Future[None]] = {}
        await asyncio.wait_for(follow._pause(client, "k", ["a", "b", "c"], closing), SAFETY)  # type: ignore[arg-type]
        for watch in closing.values():
            watch.cancel()
        return closing

    assert set(asyncio.run(scenario())) == {"a", "b"}
