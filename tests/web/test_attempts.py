"""The attempts the history has no row for, read back from a journal and a run's transcripts (specd/web/attempts.py),
and the task page's stream, which carries them, the agent's output and the page's cue to fetch its parts again."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specd.web.attempts import unfinished
from specd.web.live import task_stream


def _transcripts(folder: Path, run: str, *names: str) -> None:
    runs = folder / "transcripts" / run
    runs.mkdir(parents=True, exist_ok=True)
    for name in names:
        (runs / name).write_text(f"output of {name}\n", encoding="utf-8")


def _started(step: str, at: str, attempt: int = 1) -> dict[str, Any]:
    return {"at": at, "kind": "step_started", "step": step, "attempt": attempt}


def test_a_failed_an_interrupted_and_a_running_attempt_each_get_their_reason_and_own_transcript(
        tmp_path: Path) -> None:
    _transcripts(tmp_path, "r1", "001-s1.log", "002-s1-pre-hook.log", "003-s1.log", "004-s1-check.log")
    _transcripts(tmp_path, "r2", "001-s1.log", "002-s2.log")
    events = [
        {"kind": "run_started", "run_id": "r1"},
        _started("s1", "2026-01-01T00:00:00+00:00"),
        {"at": "2026-01-01T00:00:05+00:00", "kind": "run_finished", "status": "BLOCKED", "reason": "exit 1"},
        {"kind": "run_started", "run_id": "r1"},
        _started("s1", "2026-01-01T00:01:00+00:00", 2),  # then the run was killed: no line says so
        {"kind": "run_started", "run_id": "r2"},
        _started("s1", "2026-01-01T00:02:00+00:00", 3),
        {"kind": "step_finished", "step": "s1", "outcome": "done"},  # has its history row: not repeated here
        _started("s2", "2026-01-01T00:03:00+00:00"),
    ]
    rows = unfinished(events, tmp_path, running=True)
    assert [(r["step"], r["attempt"], r["outcome"]) for r in rows] == [
        ("s1", 1, "failed"), ("s1", 2, "interrupted"), ("s2", 1, "running")]
    assert rows[0]["reason"] == "exit 1"
    assert rows[0]["finished_at"] == "2026-01-01T00:00:05+00:00"
    # the step's own transcripts in the order the run made them; hooks' and checks' are not the step's
    assert [r["transcript"] for r in rows] == ["transcripts/r1/001-s1.log", "transcripts/r1/003-s1.log",
                                               "transcripts/r2/002-s2.log"]
    assert unfinished(events, tmp_path, running=False)[-1]["outcome"] == "interrupted"


def test_an_attempt_whose_transcript_is_gone_still_has_its_row(tmp_path: Path) -> None:
    events = [{"kind": "run_started", "run_id": "r9"}, _started("s1", "2026-01-01T00:00:00+00:00"),
              {"kind": "run_finished", "status": "CANCELLED", "reason": "cancelled"}]
    assert unfinished(events, tmp_path, running=False) == [
        {"step": "s1", "phase": "", "attempt": 1, "started_at": "2026-01-01T00:00:00+00:00", "finished_at": None,
         "reason": "cancelled", "outcome": "cancelled", "transcript": ""}]


def _collect(folder: Path, offset: int, looks: int, then: Callable[[int], None]) -> list[str]:
    """What the stream says from ``offset`` over ``looks`` polls; ``then(n)`` runs before look n, and the fake
    disconnect ends it."""
    seen = 0

    async def gone() -> bool:
        nonlocal seen
        seen += 1
        then(seen)
        return seen > looks

    async def read() -> list[str]:
        return [chunk async for chunk in task_stream(lambda: folder, offset, gone)]

    return asyncio.run(read())


def test_the_stream_says_the_events_the_status_and_when_the_page_should_fetch_its_parts(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    journal = folder / "events.jsonl"
    journal.write_text(json.dumps({"at": "2026-01-01T00:00:00+00:00", "kind": "notice", "message": "old"}) + "\n",
                       encoding="utf-8")

    def then(look: int) -> None:
        if look == 3:  # a new event while the page is open
            with journal.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"at": "2026-01-01T00:00:09+00:00", "kind": "notice", "message": "new"})
                             + "\n")

    # from where the page was rendered: the old event is on it already, and so is the status (said, no move)
    chunks = [c for c in _collect(folder, journal.stat().st_size, 4, then) if not c.startswith(":")]
    assert chunks == ["event: status\ndata: NOT_STARTED\n\n",
                      "event: line\ndata: 00:00:09 note: new\n\n", "event: changed\ndata: \n\n"]
