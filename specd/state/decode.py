"""Read the state snapshot's JSON into a RunState, checking every field it relies on.

A hand-edited or damaged ``.pipeline-state.json`` must give a clear error that
names the file and the field, never a traceback deep in the loop later. Fields
this version does not know are ignored (a newer specd may add some).
"""

from __future__ import annotations

import shlex
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.state import clusters
from specd.state.model import STATE_VERSION, Current, Frame, RunState

STATUSES = ("IN_PROGRESS", "WAITING_FOR_HUMAN", "BLOCKED", "COMPLETE", "FAILED", "CANCELLED", "ABORTED")
ROW_TEXT = ("step", "pipeline", "kind", "outcome")  # what status, render and resume read from every row


class Bad(Exception):
    """A field is wrong: where (a JSON path) and what was expected."""

    def __init__(self, where: str, expected: str) -> None:
        super().__init__(f"{where}: {expected}")
        self.where, self.expected = where, expected


def version_of(data: Any) -> int:
    version = _obj(data, "(top level)").get("version", 1)
    if type(version) is not int or version < 1:
        raise Bad("version", "must be a whole number (1 or 2)")
    if version > STATE_VERSION:
        raise Bad("version", f"is {version}, newer than this specd understands ({STATE_VERSION}); upgrade specd")
    return version


def shape_of(value: Any) -> dict[str, list[str]]:
    """The step names per pipeline the run last saw (inside an older snapshot, or in its own file)."""
    for pipeline, names in _obj(value, "shape").items():
        for i, name in enumerate(_list(names, f"shape.{pipeline}")):
            _text({"v": name}, "v", f"shape.{pipeline}[{i}]")
    return dict(value)


def decode(data: Any, history: list[dict[str, Any]] | None) -> RunState:
    """``history`` None means the rows are inside ``data`` (version 1)."""
    _obj(data, "(top level)")
    rows = data.get("history", []) if history is None else history
    for name in ("task", "run_id", "mode", "status"):
        _text(data, name, name)
    for name in ("reason", "pipeline_digest", "pipeline_source", "started_at", "updated_at", "heartbeat_at"):
        _optional_text(data, name, name)
    if data.get("status") not in STATUSES:
        raise Bad("status", f"must be one of {', '.join(STATUSES)}")
    if "cursor" not in data:
        raise Bad("cursor", "is missing (the run's position); without it the run cannot be placed")
    cursor = _list(data["cursor"], "cursor")
    for name in ("failures", "failure_clusters", "checkpoints"):
        for i, item in enumerate(_list(data.get(name, []), name)):
            _obj(item, f"{name}[{i}]")
    for i, row in enumerate(data.get("failure_clusters", [])):
        if "count" in row:
            _count(row, "count", f"failure_clusters[{i}].count")
        for key in ("key", "step", "phase", "kind", "first_seen", "last_seen", "last_note"):
            _optional_text(row, key, f"failure_clusters[{i}].{key}")
    for name in ("notes", "phases_completed", "notified"):
        for i, item in enumerate(_list(data.get(name, []), name)):
            _text({"v": item}, "v", f"{name}[{i}]")
    for name in ("usage", "waiting", "answer"):
        if data.get(name) is not None:
            _obj(data[name], name)
    _optional_text(data, "agent", "agent")
    cost = data.get("max_cost")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0):
        raise Bad("max_cost", f"must be a number ≥ 0 or null, not {_kind(cost)}")
    shape_of(data.get("shape", {}))
    _usage(data.get("usage"), "usage")
    for i, row in enumerate(_list(rows, "history")):
        for key in ROW_TEXT:
            _text(_obj(row, f"history[{i}]"), key, f"history[{i}].{key}")
        for key in ("phase", "hook", "summary", "finished_at"):
            _optional_text(row, key, f"history[{i}].{key}")
        _usage(row.get("usage"), f"history[{i}].usage")
    known = {f.name for f in fields(RunState)} - {"cursor", "current", "history", "version"}
    state = RunState(**{k: v for k, v in data.items() if k in known})
    state.cursor = [_frame(f, f"cursor[{i}]") for i, f in enumerate(cursor)]
    state.current = None if data.get("current") is None else _current(data["current"])
    state.history = list(rows)
    if data.get("failures"):  # saved before failure clusters: every failure listed on its own
        state.failure_clusters = clusters.fold(data["failures"], state.failure_clusters)
    state.version = STATE_VERSION  # read as any version, written as this one
    return state


def _frame(raw: Any, where: str) -> Frame:
    raw = _obj(raw, where)
    _text(raw, "pipeline", f"{where}.pipeline")
    if raw.get("index") is not None or ("step" not in raw and "index" in raw):
        _count(raw, "index", f"{where}.index")  # a state saved before positions were names
    elif "step" not in raw:
        raise Bad(f"{where}.step", "is missing (the step this level of the run points at)")
    _optional_text(raw, "step", f"{where}.step")
    _optional_text(raw, "phase", f"{where}.phase")
    for i, name in enumerate(_list(raw.get("done", []), f"{where}.done")):
        _text({"v": name}, "v", f"{where}.done[{i}]")
    visits = _obj(raw.get("visits", {}), f"{where}.visits")
    for step in visits:
        _count(visits, step, f"{where}.visits.{step}")
    return Frame(**_known(raw, Frame, where))


def _current(raw: Any) -> Current:
    raw = _obj(raw, "current")
    for key in ("step", "pipeline"):
        _text(raw, key, f"current.{key}")
    _optional_text(raw, "phase", "current.phase")
    for key in ("visit", "attempt", "checked"):
        if key in raw or key == "visit":
            _count(raw, key, f"current.{key}")
    for i, stage in enumerate(_list(raw.get("completed", []), "current.completed")):
        _text({"v": stage}, "v", f"current.completed[{i}]")
    _obj(raw.get("snapshot", {}), "current.snapshot")
    for key in ("outcome", "summary", "started_at"):
        _optional_text(raw, key, f"current.{key}")
    return Current(**_known(raw, Current, "current"))


def _usage(value: Any, where: str) -> None:
    """Token and cost totals are added up on every step; each must be a number."""
    if value is None:
        return
    for key, number in _obj(value, where).items():
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise Bad(f"{where}.{key}", f"must be a number, not {_kind(number)}")


def _known(raw: dict[str, Any], cls: type, where: str) -> dict[str, Any]:
    """The fields ``cls`` knows; one it cannot do without (``phase`` is null outside a phase loop, never absent)
    is a Bad field here rather than a TypeError later."""
    for f in fields(cls):
        if f.default is MISSING and f.default_factory is MISSING and f.name not in raw:
            raise Bad(f"{where}.{f.name}", "is missing" + (" (null outside a phase loop)" if f.name == "phase" else ""))
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in raw.items() if k in names}


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Bad(where, f"must be an object, not {_kind(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Bad(where, f"must be a list, not {_kind(value)}")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> None:
    if not isinstance(data.get(key), str):
        raise Bad(where, "is missing" if key not in data else f"must be text, not {_kind(data[key])}")


def _optional_text(data: dict[str, Any], key: str, where: str) -> None:
    if data.get(key) is not None:
        _text(data, key, where)


def _count(data: dict[str, Any], key: str, where: str) -> None:
    value = data.get(key)
    if type(value) is not int or value < 0:
        raise Bad(where, "is missing" if key not in data else f"must be a whole number ≥ 0, not {value!r:.40}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def error(path: Path, bad: Bad) -> TaskError:
    return TaskError(
        f"{path}: field {bad.where} {bad.expected}",
        fix=f"restore it from git (`git checkout -- {shlex.quote(str(path))}`), or move it aside to start the "
            f"task's run over (`mv {shlex.quote(str(path))} {shlex.quote(f'{path}.bak')}`)",
    )
