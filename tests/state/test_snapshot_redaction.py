"""The snapshot's incremental redaction gives what a whole walk gives, save after save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specd.redact import redact_obj
from specd.state.model import Frame, RunState
from specd.state.redacting import SnapshotRedactor
from specd.state.store import StateStore

SECRET = "sk-ant-api03-" + "Z" * 40


def test_incremental_equals_a_whole_walk_as_the_cursor_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "hunter2-very-secret-value")
    redactor = SnapshotRedactor()
    frame = {"pipeline": "main", "step": "s0", "phase": None, "visits": {}, "done": []}
    for n in range(40):
        name = f"s{n}" if n % 7 else f"s{n}-hunter2-very-secret-value"  # some names hold a secret
        frame["done"].append(name)
        frame["visits"][name] = 1 + n % 3
        frame["step"] = f"s{n + 1}"
        data = {"task": "t", "notes": [f"note {SECRET}"] * (n % 2), "cursor": [dict(frame)], "history_len": n}
        assert redactor(data) == redact_obj(data)
    frame["done"] = frame["done"][:5]  # a rerun cuts the list: no longer a prefix of what was seen
    data = {"cursor": [dict(frame)]}
    assert redactor(data) == redact_obj(data)


def test_a_secret_set_after_some_saves_is_masked_in_what_was_seen_before(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    store, state = StateStore(tmp_path, "t"), RunState(task="t")
    state.cursor = [Frame("main", "b", done=["a-sesame-open-sesame-42"], visits={"a-sesame-open-sesame-42": 1})]
    store.save(state)
    assert "sesame-open" in store.json_path.read_text()
    monkeypatch.setenv("DOOR_PASSWORD", "sesame-open-sesame-42")
    state.cursor[0].done.append("b")
    store.save(state)
    text = store.json_path.read_text()
    assert "sesame-open-sesame-42" not in text
    json.loads(text)
