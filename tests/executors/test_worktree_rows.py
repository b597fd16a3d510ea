"""A task `specd run` left waiting at a gate in its worktree is listed from its kept row, with its plan, until
something its plan is worked out from changes there: its own files, or the worktree's pipeline."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from executor_harness import Repo
from index_rows import listed

from specd.tasks.project import Project
from specd.tasks.readmodel import store
from specd.tasks.readmodel.rows import RACY_NS

SETTLE = 2 * RACY_NS / 1e9  # rows built from files changed within this are not kept


def _mark_kept_row(project: Project, folder: Path, stage: str) -> None:
    """Put a mark into the kept row of ``folder`` (as only the store holds it), which a listing shows only
    when it reads that row instead of building it."""
    with sqlite3.connect(project.specd_dir / ".cache" / store.NAME) as db:
        found = db.execute("SELECT whole, planned FROM rows WHERE folder = ?", (str(folder),)).fetchone()
        assert found is not None, "the waiting task's row was not kept"
        assert found[1] == 1  # kept with its plan
        db.execute("UPDATE rows SET whole = ? WHERE folder = ?",
                   (json.dumps({**json.loads(found[0]), "stage": stage}), str(folder)))


def test_a_task_waiting_in_its_worktree_is_listed_from_its_kept_row_until_its_plan_there_changes(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("t")
    first = repo.specd("run", "t", "--semi-auto", "--agent", repo.agent())
    assert first.returncode == 3, first.stdout + first.stderr
    project = Project(repo.root)
    tree = repo.root / ".specd" / "worktrees" / "t"
    folder = tree / ".specd" / "tasks" / "t"
    time.sleep(SETTLE)
    rows = listed(project)
    assert rows["t"]["status"] == "WAITING_FOR_HUMAN"
    assert rows["t"]["branch"] == "specd/t"
    assert [step["step"] for step in rows["t"]["plan"]] == ["s2", "s3"]
    assert rows == listed(project, cold=True)

    _mark_kept_row(project, folder, "read-from-the-store")
    assert listed(project)["t"]["stage"] == "read-from-the-store"  # not built again

    # The worktree's own pipeline, edited in place there: the plan follows it at the next listing.
    pipeline = tree / ".specd" / "pipeline.json"
    data = json.loads(pipeline.read_text(encoding="utf-8"))
    data["pipelines"]["main"].append({"name": "s4", "workflow": "work.md"})
    with pipeline.open("r+", encoding="utf-8") as handle:  # the same inode: only its own times move
        handle.write(json.dumps(data))
        handle.truncate()
    rows = listed(project)
    assert [step["step"] for step in rows["t"]["plan"]] == ["s2", "s3", "s4"]
    assert rows["t"]["stage"] != "read-from-the-store"
    assert rows == listed(project, cold=True)

    # A workflow there edited in place, and a file made deep in the task's folder there: built again each time.
    time.sleep(SETTLE)
    assert listed(project) == rows
    for change in (lambda: (tree / ".specd" / "workflows" / "work.md").open("a").write("\nmore\n"),
                   lambda: (folder / "notes").mkdir() or (folder / "notes" / "n.md").write_text("n\n")):
        listed(project)
        _mark_kept_row(project, folder, "stale")
        change()
        assert listed(project)["t"]["stage"] != "stale"
        time.sleep(SETTLE)

    # Approved and run to its end there: a finished row, the same as one worked out from the files.
    assert repo.specd("approve", "t").returncode == 0
    done = repo.specd("run", "t", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    rows = listed(project)
    assert rows["t"]["status"] == "COMPLETE"
    assert rows == listed(project, cold=True)
