"""A run's transcripts keep their order past the 999th (a run of thousands of steps), for writer and readers."""

from __future__ import annotations

from pathlib import Path

from specd.agents import numbered
from specd.agents.proc import transcript_path
from specd.tasks.follow import live


def test_numbers_go_on_past_999_and_readers_order_them_by_number(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts" / "r1"
    folder.mkdir(parents=True)
    for name in ("001-discuss.log", "998-plan.log", "999-execute.log", "notes.txt", "12-short.log"):
        (folder / name).write_text("x", encoding="utf-8")
    made = [transcript_path(tmp_path, "r1", "review", ".log") for _ in range(3)]
    assert [p.name for p in made] == ["1000-review.log", "1001-review.log", "1002-review.log"]
    assert all(p.exists() for p in made)
    assert live(tmp_path, "r1")["transcript"] == str(made[-1])  # the newest, though "1002" < "999" as text
    ordered = [p.name for p in sorted(folder.iterdir(), key=numbered.key)]
    assert ordered[-4:] == ["999-execute.log", "1000-review.log", "1001-review.log", "1002-review.log"]
    assert ordered[:2] == ["12-short.log", "notes.txt"]  # not numbered transcripts: first


def test_a_name_taken_meanwhile_is_skipped_not_overwritten(tmp_path: Path) -> None:
    first = transcript_path(tmp_path, "r2", "a", ".log")
    first.write_text("kept", encoding="utf-8")
    (first.parent / "002-c.log").write_text("someone else's", encoding="utf-8")  # made by another writer
    second = transcript_path(tmp_path, "r2", "c", ".log")
    assert (first.name, second.name) == ("001-a.log", "003-c.log")
    assert (first.parent / "002-c.log").read_text(encoding="utf-8") == "someone else's"
    assert first.read_text(encoding="utf-8") == "kept"


def test_what_counts_as_a_number() -> None:
    assert [numbered.number(n) for n in ("007-x.log", "1234-y", "12-z", "abc-1", "0١٢-x", "123")] == [
        7, 1234, None, None, None, None]
