"""A worker's record of the runs it started for each task (executors/temporal/runs.py), with real processes:
before an attempt touches a task's clone, every other run of that task here has ended, including one still
being forked when its own attempt stopped."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest

pytest.importorskip("temporalio")

from specd.executors.temporal.runs import Runs  # noqa: E402


def test_settle_stops_every_run_of_the_task_but_the_one_taken_over_and_no_other_tasks() -> None:
    async def go() -> tuple[list[Any], Runs]:
        runs = Runs()
        old, kept, other = (subprocess.Popen(["sleep", "60"]) for _ in range(3))
        runs.started("k/a", old)
        runs.started("k/a", kept)
        runs.started("k/b", other)
        await runs.settle("k/a", keep=kept)
        return [old, kept, other], runs

    (old, kept, other), runs = asyncio.run(go())
    try:
        assert old.returncode is not None  # stopped and reaped
        assert kept.poll() is None
        assert other.poll() is None
        assert runs.live == {"k/a": {kept}, "k/b": {other}}
    finally:
        for proc in (kept, other):
            proc.kill()
            proc.wait()


def test_settle_waits_for_a_run_still_being_forked_and_stops_it_too() -> None:
    async def go() -> tuple[Any, Runs, bool]:
        runs = Runs()
        loop = asyncio.get_running_loop()
        forking: asyncio.Future[Any] = loop.create_future()
        runs.forked("k/a", forking)
        settling = asyncio.ensure_future(runs.settle("k/a"))
        await asyncio.sleep(0.2)
        early = settling.done()
        late = subprocess.Popen(["sleep", "60"])
        forking.set_result(late)  # the zygote answered after the attempt that asked was stopped
        await settling
        return late, runs, early

    late, runs, early = asyncio.run(go())
    assert not early  # it waited for the fork
    assert late.returncode is not None
    assert runs.live == {}
    assert runs.forking == {}


def test_a_run_that_ended_on_its_own_is_forgotten_when_the_next_one_starts() -> None:
    async def go() -> tuple[Runs, Any]:
        runs = Runs()
        done = subprocess.Popen(["true"])
        done.wait()
        runs.started("k/a", done)
        fresh = subprocess.Popen(["sleep", "60"])
        runs.started("k/a", fresh)
        return runs, fresh

    runs, fresh = asyncio.run(go())
    try:
        assert runs.live == {"k/a": {fresh}}
    finally:
        fresh.kill()
        fresh.wait()
