"""`specd status` over every task: rows without history, plain columns when piped, no files created."""

from __future__ import annotations

import json

from brain_harness import Harness


def test_listing_rows_carry_no_history_and_print_plain_when_piped(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    for task in ("done-one", "fresh-one"):
        h.new(task)
    assert h.cont("done-one").returncode == 0
    before = sorted(p.name for p in h.task_dir("fresh-one").iterdir())

    rows = {row["task"]: row for row in json.loads(h.specd("status", "--json").stdout)}
    assert rows["done-one"]["status"] == "COMPLETE"
    assert rows["fresh-one"]["next"]["step"] == "a"
    assert all("history" not in row for row in rows.values())
    assert len(h.status("done-one")["history"]) == 2  # one task in detail still has it

    listing = h.specd("status")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["task", "status", "next", "step", "phase", "cost", "updated"]
    assert any(line.split()[:3] == ["fresh-one", "NOT_STARTED", "a"] for line in lines)
    assert not any(ch in listing.stdout for ch in "┃│━─")  # no table drawing when piped
    assert sorted(p.name for p in h.task_dir("fresh-one").iterdir()) == before  # status only reads
