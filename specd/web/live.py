"""Server-sent events: what changed, pushed to an open page.

A short poll of the files the engine already writes (the task's ``events.jsonl`` and run state; for the
tasks page, every task's state and journal times) rather than a watcher library: it works the same on every
platform and in worktrees, costs a few stat calls, and a change reaches the page within ``POLL`` plus a
render, well under a second.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from specd.errors import SpecdError
from specd.redact import redact
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.tasks import idle, locate, logs
from specd.tasks.follow import Ended, Follower, Item, Output
from specd.tasks.project import Project
from specd.tasks.readmodel.signature import task_folders
from specd.tasks.secrets import refresh_project_secrets
from specd.web import temporal_rows

POLL = 0.2  # seconds between looks
KEEPALIVE = 15.0  # a comment line now and then, so proxies and the browser keep the stream open
Disconnected = Callable[[], Awaitable[bool]]


def sse(event: str, data: str) -> str:
    lines = "".join(f"data: {part}\n" for part in data.split("\n"))
    return f"event: {event}\n{lines}\n"


def read_status(folder: Path) -> str:
    """The status the page shows: an IN_PROGRESS run no process holds is ANSWERED or STOPPED (tasks/idle.py)."""
    try:
        data = json.loads((folder / ".pipeline-state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return "NOT_STARTED"
    if not isinstance(data, dict):
        return "NOT_STARTED"
    status = str(data.get("status") or "NOT_STARTED")
    if status != "IN_PROGRESS":
        return status
    running = TaskLock(folder, folder.name).is_held()
    return idle.shown(status, idle.idle_of(status, str(data.get("answered") or ""), running))


async def task_stream(where: Callable[[], Path], offset: int, gone: Disconnected,
                      root: Path | None = None) -> AsyncIterator[str]:
    """What the task page follows: new journal events from ``offset`` on as readable lines (``line``), the agents'
    own output as they print it (``output``, read as `specd logs -f` reads it: tasks/follow.py), the run's
    status whenever it changes (``status``), and ``changed`` whenever the run state or the journal moved, on
    which the page fetches its live parts again. ``where`` says the task's live folder at each look: a task
    the control plane starts in a worktree moves there, and the page follows it (from the start of the new
    folder's journal). ``root``: the project, whose secret files are looked for again before output is sent
    (``fresh``)."""
    folder = await asyncio.to_thread(where)
    follower = await asyncio.to_thread(_follower, folder, offset)
    said, mark, label, quiet = "", await asyncio.to_thread(_mark, folder), "", time.monotonic()
    while not await gone():
        now = await asyncio.to_thread(where)
        if now != folder:
            folder = now
            follower = await asyncio.to_thread(_follower, folder, 0)
        items = await asyncio.to_thread(_items, follower)
        if items and root is not None:  # a .env the step made meanwhile: its values masked in what follows
            await asyncio.to_thread(refresh_project_secrets, root)
        status, moved = await asyncio.to_thread(read_status, folder), await asyncio.to_thread(_mark, folder)
        spoke = bool(items) or moved != mark or status != said
        # Output alone is not a move: an agent printing fast must not make the page fetch its parts again and again.
        # The first status is what the page was rendered with: said, but no move.
        moves = moved != mark or status != said != "" or any(not isinstance(i, Output | Ended) for i in items)
        for item in items:
            if isinstance(item, Output):
                if item.label != label:
                    label = item.label
                    yield sse("output", f"── {label} ──")
                yield sse("output", redact(item.text))
            elif not isinstance(item, Ended):
                yield sse("line", redact(logs.line(item)))
        if status != said:
            said = status
            yield sse("status", status)
        if moves:
            mark = moved
            yield sse("changed", "")
        if spoke:
            quiet = time.monotonic()
        elif time.monotonic() - quiet > KEEPALIVE:
            quiet = time.monotonic()
            yield ": keepalive\n\n"
        await asyncio.sleep(POLL)


def _follower(folder: Path, offset: int) -> Follower:
    """A follower of the task's journal from ``offset`` and of its current run's transcripts; a transcript that
    ended before the page opened is the steps table's link, not news."""
    try:
        state = StateStore(folder, folder.name).load(with_history=False)
    except SpecdError:  # a state file the page reports as broken: the journal is still followed
        state = None
    follower = Follower(folder, folder / "events.jsonl", state.run_id if state else None,
                        TaskLock(folder, folder.name).is_held())
    follower.offset = offset
    return follower


def _items(follower: Follower) -> list[Item]:
    return list(follower.items())


def _mark(folder: Path) -> tuple[int, int]:
    """When the run state was last written: an answer or a move changes it without a journal line."""
    try:
        st = (folder / ".pipeline-state.json").stat()
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


def fingerprint(project: Project) -> tuple[tuple[str, int, int], ...]:
    """The state and journal times of every task, in the main tree and in worktrees: cheap to take."""
    marks = []
    folders = [(name, entries[0][0]) for name, entries in task_folders(project).items()]
    folders += [(name, str(locate.worktree_root(project, name) / ".specd" / "tasks" / name))
                for name in locate.in_worktrees(project)]
    for name, folder in folders:
        for file in (".pipeline-state.json", "events.jsonl"):
            try:
                st = os.stat(os.path.join(folder, file))  # noqa: PTH116, PTH118 - thousands of calls
            except OSError:
                continue
            marks.append((name + "/" + file, st.st_mtime_ns, st.st_size))
    # tasks on Temporal: their rows as last asked (asked again in the background once old), which no file marks
    marks += [(f"temporal/{task}/{status}/{step}", 0, 0) for task, status, step in temporal_rows.mark(project)]
    return tuple(sorted(marks))


async def tasks_stream(project: Project, gone: Disconnected) -> AsyncIterator[str]:
    """A ``changed`` event whenever any task's run state or journal changed; the page then fetches its rows."""
    seen = await asyncio.to_thread(fingerprint, project)
    quiet = time.monotonic()
    yield ": open\n\n"
    while not await gone():
        await asyncio.sleep(POLL * 2)
        now = await asyncio.to_thread(fingerprint, project)
        if now != seen:
            seen, quiet = now, time.monotonic()
            yield sse("changed", "")
        elif time.monotonic() - quiet > KEEPALIVE:
            quiet = time.monotonic()
            yield ": keepalive\n\n"
