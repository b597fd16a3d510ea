"""A run state written by the version-1 format (history inside the JSON) is read and continued."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from brain_harness import Harness

from specd.state.store import StateStore

FIXTURE = Path(__file__).parent / "fixtures" / "v1-project" / "specd"
V1_ROWS = [("a", "step", None), ("b", "step", None), ("b", "hook", None), ("x", "step", "01"),
           ("y", "step", "01"), ("x", "step", "02")]


def rows(state_rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(r["step"], r["kind"], r["phase"]) for r in state_rows]


def test_v1_state_is_read_then_continued_without_rerunning_finished_steps(h: Harness) -> None:
    shutil.copytree(FIXTURE, h.root / ".specd", dirs_exist_ok=True)
    task_dir = h.task_dir("t")
    before = StateStore(task_dir, "t").load()
    assert before is not None
    assert before.status == "BLOCKED"
    assert rows(before.history) == V1_ROWS
    # The v1 file lists its one failure on its own; it is read as a failure cluster of one.
    assert [(c["step"], c["phase"], c["count"], c["first_seen"]) for c in before.failure_clusters] == [
        ("y", "02", 1, "2026-11-23T09:24:01+00:00")]
    v1_run = before.run_id

    listed = h.status("t")  # read-only: status must not convert the file
    assert listed["status"] == "BLOCKED"
    assert not (task_dir / ".pipeline-state.history.jsonl").exists()

    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    assert h.log() == ["step y 02"]  # only the blocked step ran; nothing finished re-ran

    after = StateStore(task_dir, "t").load()
    assert after is not None
    assert after.status == "COMPLETE"
    assert after.run_id == v1_run  # the same run, continued
    assert after.version == 3
    saved = json.loads((task_dir / ".pipeline-state.json").read_text(encoding="utf-8"))
    assert saved["version"] == 3
    assert "shape" not in saved
    assert saved["shape_digest"]
    assert json.loads((task_dir / ".pipeline-state.shape.json").read_text(encoding="utf-8"))["shape"] == after.shape
    assert rows(after.history) == [*V1_ROWS, ("y", "step", "02")]
    assert (task_dir / ".pipeline-state.history.jsonl").exists()
    assert "y" in (task_dir / ".pipeline-state.md").read_text(encoding="utf-8")
    assert [c["count"] for c in after.failure_clusters] == [1]  # folded once, not again on every load
    assert "## Failure clusters" in (task_dir / ".pipeline-state.md").read_text(encoding="utf-8")
