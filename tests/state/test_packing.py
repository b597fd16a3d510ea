"""The cursor is saved packed against the pipeline's shape: small whatever the run's length, and read back exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from specd.errors import TaskError
from specd.state.model import Frame, RunState
from specd.state.packing import Packer, unpack
from specd.state.store import SHAPE_JSON, STATE_JSON, StateStore

ORDER = [f"s{i}" for i in range(40)]


def _frame(done: list[str], visits: dict[str, int], pipeline: str = "main") -> dict[str, object]:
    return {"pipeline": pipeline, "step": None, "phase": None, "done": done, "visits": visits, "index": None}


def test_every_packed_frame_unpacks_to_what_was_packed_as_it_grows_and_changes() -> None:
    rng = random.Random(21)
    shape = {"main": ORDER, "inner": ORDER[:7]}
    for _ in range(60):  # one packer per run, as a store has: each save goes on from the last
        packer, done, visits = Packer(), [], {}
        for _ in range(40):
            move = rng.random()
            name = rng.choice([*ORDER, "gone-from-the-file", "other"])
            if move < 0.5 and name not in done:
                done.append(name)  # finished (a name the shape lacks stays a name)
                if rng.random() < 0.8:
                    visits[name] = visits.get(name, 0) + 1
            elif move < 0.75:
                visits[name] = rng.choice([0, 1, 2, 5])  # entered again, or reset by an approve
            elif move < 0.85 and done:
                done = done[:rng.randrange(len(done))]  # a jump back reopens the later steps
            packed = packer([_frame(list(done), dict(visits))], shape)[0]
            back = unpack(json.loads(json.dumps(packed)), shape, "cursor[0]")
            assert back["done"] == done
            assert back["visits"] == visits


def test_a_straight_run_of_2000_steps_packs_to_one_run_and_no_counts() -> None:
    order = [f"step-{i}" for i in range(2000)]
    packed = Packer()([_frame(order[:1999], {name: 1 for name in order})], {"main": order})[0]
    assert packed["done"] == [[0, 1999]]
    assert packed["visits"] == {"step-1999": 1}  # the step being run: entered, not finished


def _state(done: int, shape: dict[str, list[str]]) -> RunState:
    names = shape["main"]
    frame = Frame("main", names[done] if done < len(names) else None, None,
                  visits={n: 1 for n in names[:done + 1]}, done=list(names[:done]))
    return RunState(task="t", cursor=[frame], shape=shape)


def test_the_snapshot_stays_the_same_size_from_step_10_to_step_2000(tmp_path: Path) -> None:
    shape = {"main": [f"step-{i}" for i in range(2001)]}
    sizes = []
    for done in (10, 2000):
        folder = tmp_path / str(done)
        folder.mkdir()
        store = StateStore(folder, "t")
        state = _state(done, shape)
        store.save(state)
        sizes.append((folder / STATE_JSON).stat().st_size)
        again = StateStore(folder, "t").load()
        assert again is not None
        assert again.cursor == state.cursor
        assert again.shape == shape
    assert sizes[1] <= sizes[0] + 16  # a digit or two more in the counts, nothing per step
    assert "step-5" not in (tmp_path / "2000" / STATE_JSON).read_text(encoding="utf-8")


def test_a_kill_between_the_new_shape_and_the_snapshot_still_reads_the_old_plan(tmp_path: Path) -> None:
    old = {"main": ["a", "b", "c", "d"]}
    store = StateStore(tmp_path, "t")
    state = _state(2, old)
    store.save(state)
    snapshot = (tmp_path / STATE_JSON).read_bytes()
    state.shape = {"main": ["d", "c", "b", "a", "e"]}  # the file was edited: the next save re-plans
    state.cursor[0].step = "d"
    store.save(state)
    (tmp_path / STATE_JSON).write_bytes(snapshot)  # as if killed after the shape file, before the snapshot
    back = StateStore(tmp_path, "t").load()
    assert back is not None
    assert back.shape == old  # so the next run re-plans from the shape its cursor was saved against
    assert back.cursor[0].done == ["a", "b"]
    assert back.cursor[0].step == "c"


@pytest.mark.parametrize(("damage", "named"), [
    (lambda folder: (folder / SHAPE_JSON).unlink(), SHAPE_JSON),
    (lambda folder: (folder / SHAPE_JSON).write_text("{not json", encoding="utf-8"), SHAPE_JSON),
    (lambda folder: (folder / SHAPE_JSON).write_text('{"shape": {"main": [1]}}', encoding="utf-8"), "shape.main[0]"),
    (lambda folder: (folder / STATE_JSON).write_text((folder / STATE_JSON).read_text(encoding="utf-8").replace(
        "[[0, 2]]", "[[3, 9]]"), encoding="utf-8"), "cursor[0].done[0]"),
])
def test_a_damaged_shape_file_or_packed_cursor_is_a_clear_error(tmp_path: Path, damage: object, named: str) -> None:
    StateStore(tmp_path, "t").save(_state(2, {"main": ["a", "b", "c", "d"]}))
    assert callable(damage)
    damage(tmp_path)
    with pytest.raises(TaskError) as caught:
        StateStore(tmp_path, "t").load()
    assert named in str(caught.value)
    assert caught.value.fix  # says how to get back a readable state
