"""A task `specd run` left waiting at a gate in its worktree is listed from its kept row, with its plan, until
something its plan is worked out from changes there: its own files, or the worktree's pipeline."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
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


# The CLI in a child Python that says, after it ran, whether the listing was worked out (a miss) or read.
PROBE = ("import sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
         "    code = done.code\nprint('MEMO', 'miss' if 'specd.tasks.status' in sys.modules else 'hit', code,"
         " file=sys.stderr)\n")


def _piped(repo: Repo, *args: str) -> tuple[str, str]:
    """`specd status *args` piped: its output, and "hit" when it was printed from what was kept."""
    done = subprocess.run([sys.executable, "-c", PROBE, "status", *args], capture_output=True, text=True,
                          env=repo.env, cwd=repo.root, stdin=subprocess.DEVNULL, timeout=120, check=False)
    probe = done.stderr.splitlines()[-1].split()
    assert probe[0] == "MEMO", done.stderr
    assert probe[2] == "0", done.stderr
    return done.stdout, probe[1]


def _settled(repo: Repo, *args: str) -> str:
    """List until the listing (or `status *args`) is printed from what was kept (once its inputs are 0.1 s old)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out, how = _piped(repo, *(args or ("--json",)))
        if how == "hit":
            return out
        time.sleep(0.2)
    raise AssertionError("the listing was never printed from what was kept")


def test_a_printed_listing_of_a_task_waiting_in_its_worktree_follows_its_pipeline_and_files_there(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path, pause="s2")
    for task in ("t", "u"):
        repo.new(task)
    first = repo.specd("run", "t", "u", "--semi-auto", "--agent", repo.agent())
    assert first.returncode == 3, first.stdout + first.stderr
    tree = repo.root / ".specd" / "worktrees" / "t"
    out = json.loads(_settled(repo))
    assert [[s["step"] for s in row["plan"]] for row in out["tasks"]] == [["s2", "s3"], ["s2", "s3"]]

    pipeline = tree / ".specd" / "pipeline.json"
    data = json.loads(pipeline.read_text(encoding="utf-8"))
    data["pipelines"]["main"].append({"name": "s4", "workflow": "work.md"})
    with pipeline.open("r+", encoding="utf-8") as handle:  # in place: only its own times move
        handle.write(json.dumps(data))
        handle.truncate()
    out, how = _piped(repo, "--json")
    assert how == "miss"
    plans = {row["task"]: [s["step"] for s in row["plan"]] for row in json.loads(out)["tasks"]}
    assert plans == {"t": ["s2", "s3", "s4"], "u": ["s2", "s3"]}

    _settled(repo)
    with (tree / ".specd" / "workflows" / "work.md").open("a", encoding="utf-8") as handle:
        handle.write("\nmore\n")  # a workflow there, in place
    assert _piped(repo, "--json")[1] == "miss"
    _settled(repo)
    (tree / ".specd" / "tasks" / "t" / "notes").mkdir()  # a folder made deep in the task's folder there
    assert _piped(repo, "--json")[1] == "miss"
    _settled(repo)
    hooks = repo.root / ".specd" / "worktrees" / "u" / ".specd" / "hooks"
    hooks.mkdir()
    (hooks / "pre-s3.md").write_text("---\ndescription: before s3\n---\n\n# before s3\n", encoding="utf-8")
    out, how = _piped(repo, "--json")
    assert how == "miss"  # a hook made in u's worktree (no hooks/ there before): its plan shows it
    assert out == _piped(repo, "--json")[0]


def test_status_of_a_task_waiting_in_its_worktree_is_kept_until_what_it_reads_there_changes(tmp_path: Path) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("t")
    first = repo.specd("run", "t", "--semi-auto", "--agent", repo.agent())
    assert first.returncode == 3, first.stdout + first.stderr
    tree = repo.root / ".specd" / "worktrees" / "t"
    out = _settled(repo, "t")
    assert "WAITING_FOR_HUMAN" in out
    assert "s4" not in out
    assert _settled(repo, "t", "--json") == _piped(repo, "t", "--json")[0]

    pipeline = tree / ".specd" / "pipeline.json"
    data = json.loads(pipeline.read_text(encoding="utf-8"))
    data["pipelines"]["main"].append({"name": "s4", "workflow": "work.md"})
    with pipeline.open("r+", encoding="utf-8") as handle:  # the worktree's own pipeline, in place
        handle.write(json.dumps(data))
        handle.truncate()
    out, how = _piped(repo, "t")
    assert how == "miss"
    assert "s4" in out
    assert _settled(repo, "t") == out

    config = tree / ".specd" / "tasks" / "t" / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    with config.open("r+", encoding="utf-8") as handle:  # the task's folder there, in place
        handle.write(json.dumps({**data, "stage": "edited-over-there"}))
        handle.truncate()
    as_json, how = _piped(repo, "t", "--json")
    assert how == "miss"
    assert json.loads(as_json)["stage"] == "edited-over-there"
    _settled(repo, "t")

    assert repo.specd("approve", "t").returncode == 0  # its run state there: a new answer
    out, how = _piped(repo, "t")
    assert how == "miss"
    assert "WAITING_FOR_HUMAN" not in out
    done = repo.specd("run", "t", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "COMPLETE" in _settled(repo, "t")
    assert repo.specd("land", "t").returncode == 0  # the worktree gone, the task's home the main tree again
    out, how = _piped(repo, "t")
    assert how == "miss"
    assert "COMPLETE" in out
    assert "specd/t" not in out.split("\n")[0]
