"""A damaged or hand-edited run state gives a clear error (exit 2) naming the file and the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from specd.errors import TaskError
from specd.state.model import Current, RunState
from specd.state.store import StateStore

RunCli = Callable[..., Any]  # tests/conftest.py's run_cli fixture: (*args) -> Result(code, out, err)


def good_state() -> dict[str, Any]:
    state = RunState(task="t")
    state.current = Current("a", "main", None, 1, attempt=1)
    data = state.to_dict()
    data["version"] = 1  # rows inside the JSON, the way version 1 kept them
    data["cursor"] = [{"pipeline": "main", "index": 0, "phase": None, "visits": {}}]  # v1: positions were indexes
    data["history"] = [{"step": "a", "pipeline": "main", "phase": None, "kind": "step", "outcome": "done"}]
    return data


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = data
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return edit


def _drop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = data
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]
    return edit


CASES = {
    "cursor index is a string": (_set(("cursor", 0, "index"), "2"), "cursor[0].index"),
    "cursor index is negative": (_set(("cursor", 0, "index"), -1), "cursor[0].index"),
    "cursor index is a bool": (_set(("cursor", 0, "index"), True), "cursor[0].index"),
    "cursor step is a number": (_set(("cursor", 0), {"pipeline": "main", "step": 3}), "cursor[0].step"),
    "cursor frame has neither step nor index": (_set(("cursor", 0), {"pipeline": "main"}), "cursor[0].step"),
    "cursor done is not a list": (_set(("cursor", 0), {"pipeline": "main", "step": "a", "done": "a"}),
                                  "cursor[0].done"),
    "answer is a bool": (_set(("answer",), True), "answer"),
    "agent is a number": (_set(("agent",), 3), "agent"),
    "max_cost is text": (_set(("max_cost",), "1"), "max_cost"),
    "shape lists a number": (_set(("shape",), {"main": ["a", 2]}), "shape.main[1]"),
    "no cursor": (_drop("cursor"), "cursor"),
    "cursor is an object": (_set(("cursor",), {"pipeline": "main"}), "cursor"),
    "frame is a list": (_set(("cursor", 0), ["main", 0]), "cursor[0]"),
    "visits count is text": (_set(("cursor", 0, "visits"), {"a": "x"}), "cursor[0].visits.a"),
    "history row is not an object": (_set(("history", 0), "a"), "history[0]"),
    "history row without step": (_drop("history", 0, "step"), "history[0].step"),
    "history is null": (_set(("history",), None), "history"),
    "status unknown": (_set(("status",), "RUNNING"), "status"),
    "current is a string": (_set(("current",), "a"), "current"),
    "current attempt is a float": (_set(("current", "attempt"), 1.5), "current.attempt"),
    "completed holds a number": (_set(("current", "completed"), [3]), "current.completed[0]"),
    "version from the future": (_set(("version",), 99), "version"),
    "version is text": (_set(("version",), "2"), "version"),
    "notes hold an object": (_set(("notes",), [{}]), "notes[0]"),
    "top level is a list": (lambda d: None, "(top level)"),
    "updated_at is a bool": (_set(("updated_at",), True), "updated_at"),
    "run cost is text": (_set(("usage",), {"cost_usd": "0.1"}), "usage.cost_usd"),
    "row tokens are text": (_set(("history", 0, "usage"), {"input_tokens": "9"}), "history[0].usage.input_tokens"),
    "row phase is a list": (_set(("history", 0, "phase"), []), "history[0].phase"),
    "current summary is a list": (_set(("current", "summary"), []), "current.summary"),
    "clusters is an object": (_set(("failure_clusters",), {"a": 1}), "failure_clusters"),
    "cluster count is text": (_set(("failure_clusters",), [{"step": "a", "count": "3"}]), "failure_clusters[0].count"),
    "cluster step is a list": (_set(("failure_clusters",), [{"step": ["a"], "count": 1}]), "failure_clusters[0].step"),
    "old failure is text": (_set(("failures",), ["boom"]), "failures[0]"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrongly_typed_field_is_named(tmp_path: Path, case: str) -> None:
    edit, field = CASES[case]
    data: Any = good_state()
    edit(data)
    if case == "top level is a list":
        data = [data]
    path = tmp_path / ".pipeline-state.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TaskError) as info:
        StateStore(tmp_path, "t").load()
    message = str(info.value)
    assert str(path) in message
    assert f"field {field} " in message
    assert "fix:" in message


@pytest.mark.parametrize("text", ["{", "[" * 50_000 + "]" * 50_000, '{"n": ' + "7" * 5000 + "}", "\xff"])
def test_unparsable_state_is_a_clear_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".pipeline-state.json"
    path.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    with pytest.raises(TaskError, match=r"\.pipeline-state\.json: run state"):
        StateStore(tmp_path, "t").load()


def test_status_and_continue_on_a_bad_state_exit_2_naming_the_field(run_cli: RunCli, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".specd").mkdir(parents=True)
    assert run_cli("--project", str(root), "new", "t").code == 0
    data = good_state()
    data["cursor"][0]["index"] = "two"
    state_path = root / ".specd" / "tasks" / "t" / ".pipeline-state.json"
    state_path.write_text(json.dumps(data), encoding="utf-8")
    for args in (("status", "t"), ("status", "t", "--json"), ("continue", "t", "--auto", "--agent", "scripted")):
        result = run_cli("--project", str(root), *args)
        assert result.code == 2, (args, result.out, result.err)
        assert "cursor[0].index" in result.err
        assert "Traceback" not in result.err
    assert json.loads(state_path.read_text(encoding="utf-8")) == data  # nothing rewritten


def test_a_state_without_cursor_is_not_reported_complete(run_cli: RunCli, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".specd").mkdir(parents=True)
    assert run_cli("--project", str(root), "new", "t").code == 0
    data = good_state()
    del data["cursor"]
    (root / ".specd" / "tasks" / "t" / ".pipeline-state.json").write_text(json.dumps(data), encoding="utf-8")
    table = run_cli("--project", str(root), "status")
    assert "COMPLETE" not in table.out
    listed = run_cli("--project", str(root), "status", "--json")
    assert "COMPLETE" not in listed.out
    assert "field cursor is missing" in listed.out + listed.err
