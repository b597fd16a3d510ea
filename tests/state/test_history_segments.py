"""The history file is sealed every SEGMENT rows, so a commit re-adds a bounded file; reads stay right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.state.history import FANOUT, SEALED_DIR, SEGMENT, HistoryFile
from specd.state.model import RunState
from specd.state.store import StateStore


def row(n: int) -> dict[str, Any]:
    return {"step": f"s{n}", "pipeline": "main", "phase": None, "kind": "step", "outcome": "done"}


def saved(tmp_path: Path, count: int) -> tuple[StateStore, RunState]:
    store, state = StateStore(tmp_path, "t"), RunState(task="t")
    for n in range(count):
        state.history.append(row(n))
        store.save(state)
    return store, state


def test_the_open_file_never_holds_more_than_a_segment_and_the_sealed_ones_are_left_alone(tmp_path: Path) -> None:
    store, state = saved(tmp_path, 3 * SEGMENT + 4)
    sealed = sorted(p.name for p in (tmp_path / SEALED_DIR).iterdir())
    assert sealed == [f"{n:08d}.jsonl" for n in (0, SEGMENT, 2 * SEGMENT)]
    assert len(store.history_path.read_text().splitlines()) == 4
    first = (tmp_path / SEALED_DIR / sealed[0]).read_bytes()
    state.history.append(row(999))
    store.save(state)
    assert (tmp_path / SEALED_DIR / sealed[0]).read_bytes() == first
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert loaded.history == state.history


def test_a_resumed_run_keeps_filling_the_open_file_from_where_it_was(tmp_path: Path) -> None:
    saved(tmp_path, SEGMENT - 2)
    store = StateStore(tmp_path, "t")
    state = store.load()
    assert state is not None
    for n in range(SEGMENT - 2, SEGMENT + 3):
        state.history.append(row(n))
        store.save(state)
    assert len(store.history_path.read_text().splitlines()) == 3  # rows SEGMENT.. in a new open file
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert [r["step"] for r in loaded.history] == [f"s{n}" for n in range(SEGMENT + 3)]


def test_a_rewrite_killed_before_the_sealed_files_went_still_reads_the_rewritten_rows(tmp_path: Path) -> None:
    store, state = saved(tmp_path, 2 * SEGMENT + 1)
    changed = [dict(r, superseded=True) for r in state.history]
    sealed = {p: p.read_bytes() for p in (tmp_path / SEALED_DIR).iterdir()}
    HistoryFile(store.history_path).rewrite(changed)
    for path, data in sealed.items():  # as if killed right after the open file was replaced
        path.write_bytes(data)
    loaded = StateStore(tmp_path, "t").load()
    assert loaded is not None
    assert loaded.history == changed


def test_a_killed_tail_past_a_seal_is_ignored_and_the_rerun_row_replaces_it(tmp_path: Path) -> None:
    store, state = saved(tmp_path, SEGMENT)
    # A save appended rows SEGMENT and SEGMENT+1 (sealing the full file first), then was killed before the
    # snapshot, which still counts SEGMENT rows.
    HistoryFile(store.history_path).append([*state.history, row(500), row(501)], SEGMENT)
    resumed = StateStore(tmp_path, "t")
    again = resumed.load()
    assert again is not None
    assert len(again.history) == SEGMENT
    again.history.append(row(SEGMENT))
    resumed.save(again)
    final = StateStore(tmp_path, "t").load()
    assert final is not None
    assert [r["step"] for r in final.history] == [f"s{n}" for n in range(SEGMENT + 1)]


def test_sealed_files_of_one_size_are_joined_so_2000_rows_lie_in_three_files(tmp_path: Path) -> None:
    history = HistoryFile(tmp_path / ".pipeline-state.history.jsonl")
    rows = [row(n) for n in range(2010)]
    for start in range(0, len(rows), 10):  # unsynced rows sealed and joined in between: sync() must still work
        history.append(rows[:start + 10], start, durable=False)
        if start % 400 == 0:
            history.sync()
    history.sync()
    sealed = sorted(p.name for p in (tmp_path / SEALED_DIR).iterdir())
    per_level = SEGMENT * FANOUT
    assert sealed == [f"{n:08d}.jsonl" for n in (0, per_level * FANOUT, per_level * FANOUT + per_level)]
    assert HistoryFile(history.path).read(len(rows), snapshot=tmp_path / "s.json") == rows


def test_a_join_killed_before_the_joined_files_went_still_reads_each_row_once(tmp_path: Path) -> None:
    rows = [row(n) for n in range(SEGMENT * (FANOUT - 1) + 3)]
    history = HistoryFile(tmp_path / ".pipeline-state.history.jsonl")
    history.append(rows, 0)
    kept = {p.name: p.read_bytes() for p in (tmp_path / SEALED_DIR).iterdir()}
    assert len(kept) == FANOUT - 1
    rows += [row(n) for n in range(len(rows), SEGMENT * FANOUT + 1)]
    history.append(rows, SEGMENT * (FANOUT - 1) + 3)  # the eighth seal joins all eight into one file
    assert [p.name for p in (tmp_path / SEALED_DIR).iterdir()] == [f"{0:08d}.jsonl"]
    # As if killed while the joined files were removed, oldest first: the newest few are still there.
    joined = (tmp_path / SEALED_DIR / f"{0:08d}.jsonl").read_bytes().splitlines(keepends=True)
    last = SEGMENT * (FANOUT - 1)
    (tmp_path / SEALED_DIR / f"{last:08d}.jsonl").write_bytes(b"".join(joined[last:last + SEGMENT]))
    for first in range(last - 3 * SEGMENT, last, SEGMENT):
        (tmp_path / SEALED_DIR / f"{first:08d}.jsonl").write_bytes(kept[f"{first:08d}.jsonl"])
    assert HistoryFile(history.path).read(len(rows), snapshot=tmp_path / "s.json") == rows
