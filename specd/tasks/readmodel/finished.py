"""A listing row for a finished task, read straight from its snapshot: the fast path of a cold `specd status`.

A cold listing (no status index, as after a fresh clone) built every row
through the whole machinery: a StateStore, a full decode of the run state
(the pipeline's shape, the cursor, every field checked), a TaskLock, paths
resolved. For a run that ended for good (COMPLETE, CANCELLED, FAILED) the row
shows only a few fields of the snapshot, so only those are read and checked.
Anything unusual (an older state version, a field of the wrong type, escaped
surrogates, a lock owner file that may mean a live run) returns None, and the
caller builds the row the full way, which also gives the exact error for a
broken file. The row is the same dict, key for key, that ``task_status`` makes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from specd.state.model import RunState
from specd.state.store import STATE_JSON
from specd.state.waits import hint
from specd.tasks import graph, phases
from specd.tasks.phases import PHASE_FOLDERS
from specd.tasks.task import read_config

FINAL = frozenset({"COMPLETE", "CANCELLED", "FAILED"})
LISTS = ("checkpoints", "failure_clusters")
CHUNK = 16_384  # most run states fit in one read; a 64 KB buffer per read cost more than the read
OWNER = ".run.lock.owner"  # there while a run holds the lock, or after one was killed
_STATES: dict[str, RunState] = {}


def finished_row(task: str, folder: str, shown: str, present: Collection[str]) -> dict[str, Any] | None:
    """The row of a task whose run ended for good, or None when the full path must build it. ``present``:
    the watched files in the folder (``signature``), just found by the listing: no need to ask again."""
    if STATE_JSON not in present or OWNER in present:
        return None  # no run yet (derived from its files), or maybe a live run: the full path's to judge
    data, config = _json(folder, STATE_JSON), _json(folder, "config.json")
    if not _plausible(data):
        return None  # unreadable, older, unfinished or odd: the full decode reports exactly what is wrong
    if not isinstance(config, dict):
        config = read_config(Path(folder))  # raises the same TaskError as the full path
    status = data["status"]
    if status not in _STATES:  # hint() reads only the status of a finished run: one probe state each
        _STATES[status] = RunState(task="", status=status)
    deps = config.get("depends_on")  # most tasks need none: no Path made for graph.needs' error message
    needs = [] if deps is None or deps == [] else list(graph.needs(Path(folder), config))
    shows_phases = any(name in present for name in ("ROADMAP.md", *PHASE_FOLDERS))
    return {
        "task": task, "status": status, "stage": config.get("stage"), "folder": shown,
        "needs": needs, "next": None, "plan": [], "progress": None,
        "reason": data.get("reason", ""), "waiting": data.get("waiting"), "run_id": data["run_id"],
        "mode": data["mode"], "agent": data.get("agent"), "started_at": data["started_at"],
        "updated_at": data["updated_at"], "usage": data.get("usage", {}),
        "checkpoints": data.get("checkpoints", [])[-10:], "failure_clusters": data.get("failure_clusters", []),
        "phases": [p.id for p in phases.discover(Path(folder))] if shows_phases else [],
        "phases_completed": data.get("phases_completed", []), "idle": None, "running": None,
        "hint": hint(task, _STATES[status]),
    }


def _json(folder: str, name: str) -> Any:
    """The file's JSON, or None when it cannot be read or parsed as it is (bytes: no text decoding pass)."""
    try:
        fd = os.open(f"{folder}/{name}", os.O_RDONLY)  # no file object per task: 20,000 of them when cold
        try:
            raw = chunk = os.read(fd, CHUNK)
            while len(chunk) == CHUNK:  # a regular file reads short only at its end
                chunk = os.read(fd, CHUNK)
                raw += chunk
        finally:
            os.close(fd)
        # Plain UTF-8 JSON only: json.loads would take a BOM or UTF-16 bytes the full path's read_text refuses,
        # and a surrogate escape is for the full path to scrub.
        odd = not raw.lstrip().startswith(b"{") or b"\x00" in raw or b"\\ud" in raw or b"\\uD" in raw
        return None if odd else json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _plausible(data: Any) -> bool:
    """The shown fields have the types a full decode would accept (else that decode reports the error).
    Written out field by field: it runs once per task in a cold listing."""
    if (type(data) is not dict or data.get("version") not in (2, 3) or data.get("status") not in FINAL
            or "failures" in data):
        return False  # an older failures list is folded into clusters by the full decode
    get = data.get
    if not (type(get("run_id")) is str and type(get("mode")) is str and type(get("started_at")) is str
            and type(get("updated_at")) is str and type(get("reason", "")) is str):
        return False
    agent, usage, waiting, done = get("agent"), get("usage"), get("waiting"), get("phases_completed", [])
    if (agent is not None and type(agent) is not str) or (waiting is not None and type(waiting) is not dict):
        return False
    if type(done) is not list or (done and any(type(i) is not str for i in done)):
        return False
    if usage is not None:
        if type(usage) is not dict:
            return False
        for value in usage.values():
            if type(value) is not int and type(value) is not float:
                return False
    for key in LISTS:
        items = get(key, [])
        if type(items) is not list or (items and any(type(i) is not dict for i in items)):
            return False
    return True
