"""The run state store: appends only new rows, rewrites the snapshot only on change, recovers from a kill."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from specd.errors import TaskError
from specd.state.history import SEALED_DIR, SEGMENT, HistoryFile
from specd.state.model import Current, RunState
from specd.state.store import StateStore


def row(step: str, n: int) -> dict[str, Any]:
    return {"step": step, "pipeline": "main", "phase": None, "kind": "step", "outcome": "done", "n": n}


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_save_appends_only_new_rows_and_load_reads_them_back(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    for n in range(30):
        state.history.append(row(f"s{n}", n))
        store.save(state)
    sealed = sorted((tmp_path / SEALED_DIR).iterdir())
    # one line per row, never the whole history again; a full file of SEGMENT rows is sealed
    assert lines(store.history_path) + sum(map(lines, sealed)) == 30
    assert lines(store.history_path) == 30 - SEGMENT
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert loaded.history == state.history


def test_unchanged_state_is_not_rewritten(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    store.save(state)
    inode = store.json_path.stat().st_ino
    store.save(state)
    assert store.json_path.stat().st_ino == inode  # an atomic rewrite would have replaced the file
    state.status = "BLOCKED"
    store.save(state)
    assert store.json_path.stat().st_ino != inode


def test_a_stage_that_ran_nothing_needs_no_write_but_a_row_or_an_attempt_does(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.current = Current("a", "main", None, 1)
    store.save(state)
    inode = store.json_path.stat().st_ino
    state.current.completed.append("pre-step")
    store.save(state)
    assert store.json_path.stat().st_ino == inode
    state.current.attempt += 1  # saved before dispatch: must be durable
    store.save(state)
    after_attempt = store.json_path.stat().st_ino
    assert after_attempt != inode
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert loaded.current is not None
    assert loaded.current.attempt == 1


def test_kill_between_row_append_and_snapshot_drops_the_row_and_the_rerun_is_recorded_once(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history += [row("a", 0), row("b", 1)]
    store.save(state)
    # The next save appended row 2 and was killed before the snapshot: the snapshot still counts 2.
    HistoryFile(store.history_path).append([*state.history, row("c-killed", 2)], 2)
    resumed = StateStore(tmp_path, "t")
    again = resumed.load()
    assert again is not None
    assert [r["step"] for r in again.history] == ["a", "b"]  # the step re-runs
    again.history.append(row("c", 2))
    resumed.save(again)
    final = StateStore(tmp_path, "t").load()
    assert final is not None
    assert [r["step"] for r in final.history] == ["a", "b", "c"]  # recorded once, the re-run's row


def test_a_torn_last_line_is_dropped_and_does_not_swallow_the_next_row(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history.append(row("a", 0))
    store.save(state)
    with store.history_path.open("a", encoding="utf-8") as handle:
        handle.write('{"at": "x", "kind": "row", "n": 1, "ro')  # killed mid-append
    resumed = StateStore(tmp_path, "t")
    again = resumed.load()
    assert again is not None
    again.history.append(row("b", 1))
    resumed.save(again)
    final = StateStore(tmp_path, "t").load()
    assert final is not None
    assert [r["step"] for r in final.history] == ["a", "b"]


def test_rows_changed_in_place_are_written_whole(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history += [row("a", 0), row("b", 1)]
    store.save(state)
    del state.history[1:]  # a shorter history (a rerun that dropped rows) rewrites the file
    store.save(state)
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert [r["step"] for r in loaded.history] == ["a"]


def test_finish_renders_markdown_and_save_does_not(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history.append(row("alpha", 0))
    store.save(state)
    assert not store.md_path.exists()
    state.status = "COMPLETE"
    store.finish(state)
    text = store.md_path.read_text(encoding="utf-8")
    assert "alpha" in text
    assert "COMPLETE" in text


def test_a_run_that_ends_where_it_began_leaves_the_files_as_they_were(tmp_path: Path) -> None:
    """A waiting task looked at again: saved IN_PROGRESS at the start, WAITING again at the end, nothing else.
    The snapshot goes back to its old bytes (times included) and the markdown is not written at all."""
    old = RunState(task="t", status="WAITING_FOR_HUMAN", reason="gate")
    old.history.append(row("alpha", 0))
    StateStore(tmp_path, "t").finish(old)
    then = old.updated_at
    time.sleep(1.1)  # a later second: a rewrite would show it
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    md = (tmp_path / ".pipeline-state.md").stat().st_mtime_ns
    store = StateStore(tmp_path, "t")
    state = store.load()
    assert state is not None
    state.status, state.reason = "IN_PROGRESS", ""
    store.save(state)  # the run's start: live, with a fresh time
    assert store.json_path.read_bytes() != before[store.json_path.name]
    state.status, state.reason = "WAITING_FOR_HUMAN", "gate"
    store.finish(state)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert state.updated_at == state.heartbeat_at == then
    assert store.md_path.stat().st_mtime_ns == md
    state.notes.append("a real change")  # anything else is news, with a time of its own
    store.finish(state)
    assert state.updated_at != then
    assert state.updated_at in store.md_path.read_text(encoding="utf-8")


def test_listing_load_skips_history(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history.append(row("a", 0))
    store.save(state)
    store.history_path.write_text("garbage that would fail a full read\n", encoding="utf-8")
    light = StateStore(tmp_path, "t").load(with_history=False)
    assert light is not None
    assert light.history == []
    with pytest.raises(TaskError, match="history"):
        StateStore(tmp_path, "t").load()


def test_missing_counted_rows_are_a_clear_error(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history += [row("a", 0), row("b", 1)]
    store.save(state)
    kept = store.history_path.read_text(encoding="utf-8").splitlines()[0]
    store.history_path.write_text(kept + "\n", encoding="utf-8")
    with pytest.raises(TaskError) as info:
        StateStore(tmp_path, "t").load()
    assert str(store.history_path) in str(info.value)
    assert "counts 2" in str(info.value)


def test_rows_marked_in_place_are_written_after_history_changed(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history += [row("a", 0), row("b", 1)]
    store.save(state)
    state.history[0]["superseded"] = True
    store.history_changed()
    store.save(state)
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert loaded.history[0].get("superseded") is True


def test_a_listing_load_cannot_be_saved(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history.append(row("a", 0))
    store.save(state)
    lister = StateStore(tmp_path, "t")
    light = lister.load(with_history=False)
    assert light is not None
    with pytest.raises(RuntimeError):
        lister.save(light)
    full = StateStore(tmp_path, "t").load()
    assert full is not None
    assert len(full.history) == 1


def test_markdown_renders_rows_it_does_not_recognise(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history.append({"step": "a", "pipeline": "main", "kind": "step", "outcome": "done", "usage": [1],
                          "artifacts": ["x", {"path": "p"}]})
    state.checkpoints.append({"answer": "proceed"})
    state.failure_clusters.append({})
    store.finish(state)
    text = store.md_path.read_text(encoding="utf-8")
    assert "| 1 | a | main |" in text
    assert "proceed" in text


def test_kill_between_snapshot_and_history_rewrite_after_a_shrink_stays_loadable(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    state.history += [row("a", 0), row("b", 1), row("c", 2)]
    store.save(state)
    old_rows = store.history_path.read_bytes()
    del state.history[1:]
    store.save(state)
    store.history_path.write_bytes(old_rows)  # as if killed after the snapshot, before the rewrite
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert [r["step"] for r in loaded.history] == ["a"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_row_whose_text_holds_a_unicode_line_separator_is_read_back_whole(tmp_path: Path, separator: str) -> None:
    """Found by hand: a step whose summary held U+2028 broke its task (`status`: "counts 2 finished rows but this
    file holds 0"). JSON leaves these characters as they are in a string, and the reader split lines at them."""
    store = StateStore(tmp_path, "t")
    state = RunState(task="t")
    said = f"first{separator}second"
    state.history.append({**row("a", 0), "summary": said})
    state.history.append(row("b", 1))
    store.save(state)
    store.journal.append("step_finished", step="a", summary=said)
    store.journal.append("run_finished", status="IN_PROGRESS")
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert [(r["step"], r.get("summary")) for r in loaded.history] == [("a", said), ("b", None)]
    skipped: list[int] = []
    events = store.journal.read(skipped)
    assert [(e["kind"], e.get("summary")) for e in events] == [("step_finished", said), ("run_finished", None)]
    assert skipped == []

    from specd.tasks.logs import read_events  # `specd logs -f` and the page read from an offset

    followed, offset = read_events(store.journal.path, 0)
    assert followed == events
    assert offset == store.journal.path.stat().st_size
