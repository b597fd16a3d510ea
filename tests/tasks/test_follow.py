"""Following a task's files (tasks/follow.py) without processes: a scripted ``wait`` writes what a run would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from specd.tasks.follow import Ended, Follower, Item, Output, belongs, follow, label_of
from specd.tasks.transcript_text import readable


class Lock:
    """Held for as many looks as the script has writes left."""

    def __init__(self, writes: list[Callable[[], None]]) -> None:
        self.writes = writes

    def is_held(self) -> bool:
        return bool(self.writes)

    def wait(self) -> None:
        self.writes.pop(0)()


def event(journal: Path, kind: str, **data: object) -> None:
    with journal.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"at": "2026-01-01T00:00:00", "kind": kind, **data}) + "\n")


def append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def shown(items: list[Item]) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, Output):
            out.append(f"{item.label}| {item.text}")
        elif isinstance(item, Ended):
            out.append(f"end {item.label}")
        else:
            out.append(f"{item['kind']} {item.get('step', '')}".strip())
    return out


def test_output_comes_between_its_steps_events_and_a_torn_line_waits_for_its_end(tmp_path: Path) -> None:
    journal, run = tmp_path / "events.jsonl", tmp_path / "transcripts" / "r1"
    step_log, hook_log = run / "001-a.log", run / "002-a-post-hook.log"
    writes = [
        lambda: (event(journal, "run_started", run_id="r1"), event(journal, "step_started", step="a")),
        lambda: append(step_log, "one\ntw"),
        lambda: append(step_log, "o\nthree (no newline)"),
        lambda: append(hook_log, "hook says\n"),
        lambda: (event(journal, "hook_finished", step="a"), event(journal, "step_finished", step="a"),
                 event(journal, "run_finished", status="COMPLETE")),
    ]
    lock = Lock(writes)

    items = list(follow(Follower(tmp_path, journal, None, True), lock, lock.wait))  # type: ignore[arg-type]

    assert shown(items) == ["run_started", "step_started a", "a| one", "a| two", "a| three (no newline)", "end a",
                            "a-post-hook| hook says", "end a-post-hook", "hook_finished a", "step_finished a",
                            "run_finished"]


def test_only_the_newest_transcript_of_a_live_run_is_shown_from_its_start(tmp_path: Path) -> None:
    journal, run = tmp_path / "events.jsonl", tmp_path / "transcripts" / "r1"
    append(run / "001-a.log", "old output\n")
    append(run / "002-a-post-hook.log", "old hook output\n")
    append(run / "003-b.log", "b so far\n")
    event(journal, "hook_finished", step="a")
    event(journal, "step_finished", step="a")
    lock = Lock([lambda: append(run / "003-b.log", "b later\n")])

    items = list(follow(Follower(tmp_path, journal, "r1", True), lock, lock.wait))  # type: ignore[arg-type]

    assert shown(items) == ["hook_finished a", "step_finished a", "b| b so far", "b| b later"]


def test_following_a_task_no_run_holds_prints_its_events_and_no_old_output(tmp_path: Path) -> None:
    journal, run = tmp_path / "events.jsonl", tmp_path / "transcripts" / "r1"
    append(run / "001-a.log", "old output\n")
    event(journal, "step_finished", step="a")
    event(journal, "run_finished", status="COMPLETE")
    lock = Lock([])

    items = list(follow(Follower(tmp_path, journal, "r1", False), lock, lock.wait))  # type: ignore[arg-type]

    assert shown(items) == ["step_finished a", "run_finished"]


def test_a_step_filter_takes_its_own_hooks_and_labels_come_from_file_names() -> None:
    assert label_of(Path("007-execute-pre-hook.log")) == "execute-pre-hook"
    assert belongs("execute-pre-hook", "execute")
    assert belongs("execute", "execute")
    assert not belongs("execute-2", "execute")
    assert not belongs("review", "execute")
    assert belongs("review", None)


def test_json_transcripts_show_the_models_prose_only() -> None:
    claude = {"type": "assistant", "message": {"content": [{"type": "text", "text": "Looking.\n\nDone."},
                                                           {"type": "tool_use", "name": "Read", "input": {}}]}}
    anthropic = {"type": "response", "content": [{"type": "text", "text": "I will edit app.py"}]}
    assert readable(json.dumps(claude)) == ["Looking.", "Done."]
    assert readable(json.dumps(anthropic)) == ["I will edit app.py"]
    assert readable(json.dumps({"type": "stderr", "text": "warn: x"})) == ["stderr: warn: x"]
    assert readable(json.dumps({"type": "user", "message": {"content": [{"type": "tool_result"}]}})) == []
    assert readable("Error: not logged in") == ["Error: not logged in"]
    assert readable("") == []
