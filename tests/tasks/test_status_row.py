"""The cold listing's fast row for a finished run says exactly what the full path says, and steps aside
for anything it does not read itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

from brain_harness import Harness
from index_rows import indexed

from specd.tasks.project import Project
from specd.tasks.readmodel import finished, signature
from specd.tasks.readmodel.rows import RACY_NS
from specd.tasks.status import all_status, task_status


def _finished(h: Harness) -> Project:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    for task in ("base", "needy", "phased", "failed"):
        h.new(task)
        assert h.cont(task).returncode == 0
    config = h.task_dir("needy") / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "depends_on": ["base"], "stage": "review"}))
    (h.task_dir("phased") / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: Build\n\n### Phase 2: Ship\n")
    (h.task_dir("phased") / "phases" / "phase-03").mkdir(parents=True)
    state = h.task_dir("failed") / ".pipeline-state.json"
    state.write_text(json.dumps({**json.loads(state.read_text()), "status": "FAILED", "reason": "tests failed"}))
    return Project(h.root)


def _fast(project: Project, task: str) -> dict | None:
    (folder, sig, _, _), = signature.task_folders(project)[task]
    return finished.finished_row(task, folder, f".specd/tasks/{task}", signature.names(sig[1]))


def test_fast_rows_equal_the_full_rows_key_for_key(h: Harness) -> None:
    project = _finished(h)
    for task in ("base", "needy", "phased", "failed"):
        fast = _fast(project, task)
        assert fast is not None, task
        full = task_status(project, task, listing=True)
        assert list(fast.items()) == list(full.items()), task  # same keys in the same order: same JSON
    assert _fast(project, "phased")["phases"] == ["01", "02", "03"]  # type: ignore[index]
    assert _fast(project, "failed")["hint"] == "specd retry failed"  # type: ignore[index]


def test_the_full_path_builds_what_the_fast_row_does_not_read(h: Harness) -> None:
    project = _finished(h)
    base = h.task_dir("base")
    (base / ".run.lock.owner").write_text(json.dumps({"pid": 1, "host": "elsewhere"}))  # maybe a live run
    assert _fast(project, "base") is None
    (base / ".run.lock.owner").unlink()

    state_file = base / ".pipeline-state.json"
    good = json.loads(state_file.read_text())
    for odd in ({"status": "IN_PROGRESS"}, {"version": 1}, {"usage": {"cost_usd": "lots"}}, {"reason": 3},
                {"failures": []}):
        state_file.write_text(json.dumps({**good, **odd}))
        assert _fast(project, "base") is None, odd
    state_file.write_bytes(b"\xef\xbb\xbf" + json.dumps(good).encode())  # a BOM the full path refuses
    assert _fast(project, "base") is None

    # A broken shown field: the listing still gives the full path's ERROR row, naming the file.
    state_file.write_text(json.dumps({**good, "usage": {"cost_usd": "lots"}}))
    rows = {row["task"]: row for row in all_status(project)}
    assert rows["base"]["status"] == "ERROR"
    assert "usage.cost_usd" in rows["base"]["reason"]
    assert rows["needy"]["status"] == "COMPLETE"


def test_a_cold_listing_reads_rows_as_before_and_saves_the_index_once(h: Harness) -> None:
    project = _finished(h)
    # Files older than the index's racy window (change times, which nothing can set back), so the first
    # listing keeps every row.
    time.sleep(2 * RACY_NS / 1e9)
    cold = all_status(project)
    assert set(indexed(project.specd_dir)) == {str(project.tasks_dir / t) for t in folders_of(cold)}
    saved = _written(project)
    assert all_status(project) == cold  # warm, from the index
    assert _written(project) == saved  # nothing changed: not written
    folders = {row["task"]: row["folder"] for row in cold}
    assert folders == {t: f".specd/tasks/{t}" for t in ("base", "needy", "phased", "failed")}


def _written(project: Project) -> dict[str, tuple[int, int]]:
    """When each of the index's files was last written, and its size."""
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size)
            for p in Path(project.specd_dir, ".cache").glob("index.db*") if not p.name.endswith("-shm")}


def folders_of(rows: list[dict]) -> list[str]:
    return [str(row["task"]) for row in rows]
