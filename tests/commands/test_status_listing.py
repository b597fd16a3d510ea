"""`specd status` over every task: rows without history, plain columns when piped, no files created."""

from __future__ import annotations

import json
import time

from brain_harness import Harness
from index_rows import indexed


def test_listing_rows_carry_no_history_and_print_plain_when_piped(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    for task in ("done-one", "fresh-one"):
        h.new(task)
    assert h.cont("done-one").returncode == 0
    before = sorted(p.name for p in h.task_dir("fresh-one").iterdir())

    rows = {row["task"]: row for row in json.loads(h.specd("status", "--json").stdout)["tasks"]}
    assert rows["done-one"]["status"] == "COMPLETE"
    assert rows["fresh-one"]["next"]["step"] == "a"
    assert all("history" not in row for row in rows.values())
    assert len(h.status("done-one")["history"]) == 2  # one task in detail still has it

    listing = h.specd("status")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["task", "status", "needs", "ready", "next", "step", "phase", "cost", "updated"]
    assert any(line.split()[:5] == ["fresh-one", "NOT_STARTED", "-", "yes", "a"] for line in lines)
    assert not any(ch in listing.stdout for ch in "┃│━─")  # no table drawing when piped
    assert sorted(p.name for p in h.task_dir("fresh-one").iterdir()) == before  # status only reads


def _rows(h: Harness) -> dict[str, dict]:
    return {row["task"]: row for row in json.loads(h.specd("status", "--json").stdout)["tasks"]}


def _indexed(h: Harness) -> dict[str, dict]:
    """The whole rows the index holds (written by `status --json`), by task."""
    return {k.rsplit("/", 1)[1]: whole for k, (_, whole) in indexed(h.root / ".specd").items() if whole is not None}


def _kept(h: Harness, task: str) -> dict[str, dict]:
    """The index once it holds ``task``'s row again: a row is kept only once the files it was built from are
    0.1 s old (an edit within one tick of the file clock would go unseen), so the listing is asked again until
    then. The deadline is a safety net only."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _rows(h)
        found = _indexed(h)
        if task in found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{task}'s row was never kept again")


def test_finished_rows_are_indexed_and_rebuilt_when_their_files_change(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    for task in ("done-one", "fresh-one"):
        h.new(task)
    assert h.cont("done-one").returncode == 0
    _kept(h, "done-one")  # asked until the run's files are old enough to keep its row (the 0.1 s rule)
    first = _rows(h)
    assert set(_indexed(h)) == {"done-one", "fresh-one"}  # every task no run holds; the unfinished with its plan
    for task in ("done-one", "fresh-one"):
        assert _indexed(h)[task] == {k: v for k, v in first[task].items() if k not in ("ready", "waits_for")}
    assert first["fresh-one"]["plan"] == [{"step": "a", "pipeline": "main", "phase": None},
                                          {"step": "b", "pipeline": "main", "phase": None}]
    assert _rows(h) == first  # the second listing, from the index, says the same

    # An in-place edit (same inode) to config.json: the row is built again, and says so.
    config = h.task_dir("done-one") / "config.json"
    data = json.loads(config.read_text())
    data["stage"] = "edited-in-place"
    with config.open("r+") as handle:
        handle.write(json.dumps(data) + " " * 40)
    assert _rows(h)["done-one"]["stage"] == "edited-in-place"
    assert _kept(h, "done-one")["done-one"]["stage"] == "edited-in-place"

    # A phase added to the roadmap shows up, too.
    (h.task_dir("done-one") / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: First\n")
    assert _rows(h)["done-one"]["phases"] == ["01"]


def test_a_broken_index_or_a_name_in_both_folders_is_never_trusted(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    assert h.cont("t").returncode == 0
    _kept(h, "t")  # the run's row kept (its files 0.1 s old), so the tear below is of an index that holds it
    good = _rows(h)
    index = h.root / ".specd" / ".cache" / "index.db"
    index.write_bytes(index.read_bytes()[:1000])  # torn
    # the listing as printed is kept in the same file, torn with it
    assert _rows(h) == good
    assert "t" in _kept(h, "t")  # written afresh (once its files are 0.1 s old, at most a listing later)

    twin = h.root / ".specd" / "features" / "t"
    twin.mkdir(parents=True)
    (twin / "config.json").write_text("{}")
    clash = _rows(h)["t"]
    assert clash["status"] == "ERROR"
    assert "exists twice" in clash["reason"]


def test_a_task_whose_files_do_not_load_is_named_with_its_fix_and_blocks_no_other(h: Harness) -> None:
    """Found by hand: a broken config.json gave an ERROR row with `ready: yes` and nothing said why in the table
    (only --json carried the reason), and `specd new` of any other task was refused over it."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("broken")
    (h.task_dir("broken") / "config.json").write_text('{"stage": \n', encoding="utf-8")

    for _ in range(2):  # worked out, then the same listing printed again from what was kept
        listing = h.specd("status")
        assert listing.returncode == 0, listing.stderr
        row = next(line.split() for line in listing.stdout.splitlines() if line.startswith("broken"))
        assert row[:4] == ["broken", "ERROR", "-", "-"]  # ready for nothing
        assert "task broken does not load:" in listing.stderr
        assert "broken/config.json: invalid JSON" in listing.stderr
        assert "fix: fix the JSON syntax" in listing.stderr

    made = h.specd("new", "fresh", "--description", "x")
    assert made.returncode == 0, made.stderr
    after = h.specd("new", "later", "--after", "broken", "--description", "y")
    assert after.returncode == 0, after.stderr
    assert json.loads((h.task_dir("later") / "config.json").read_text())["depends_on"] == ["broken"]
