"""The listing's SQLite index is only a cache: whatever happens to the task folders or to the index itself (a
hand edit, a folder deleted or copied in, the index deleted, damaged, or cut short by `kill -9` while it was
written), the next listing says what the files say."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from brain_harness import Harness
from index_rows import indexed, listed

from specd.tasks.project import Project
from specd.tasks.readmodel import store
from specd.tasks.readmodel.rows import RACY_NS
from specd.tasks.status import all_status

SETTLE = 2 * RACY_NS / 1e9  # rows built from files changed within this are not kept


def _project(h: Harness, *tasks: str) -> Project:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    for task in tasks:
        h.new(task)
        assert h.cont(task).returncode == 0
    time.sleep(SETTLE)
    return Project(h.root)


def _listing(h: Harness) -> dict[str, dict[str, Any]]:
    out = h.specd("status", "--json")
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr  # a rebuilt index says nothing: it is only a cache
    return {row["task"]: row for row in json.loads(out.stdout)["tasks"]}


def _truth(h: Harness) -> dict[str, dict[str, Any]]:
    """The listing worked out from the files alone: the index and every memo set aside, then put back."""
    cache, aside = h.root / ".specd" / ".cache", h.root / ".specd" / ".cache-aside"
    cache.rename(aside)
    try:
        return _listing(h)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        aside.rename(cache)


def test_hand_edits_deletions_and_copied_in_folders_show_at_the_next_listing(h: Harness) -> None:
    _project(h, "one", "two", "three")
    first = _listing(h)
    assert _listing(h) == first == _truth(h)  # warm: from the index, the same
    assert set(indexed(h.root / ".specd")) == {str(h.task_dir(t)) for t in ("one", "two", "three")}

    config = h.task_dir("one") / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "stage": "edited-by-hand"}), encoding="utf-8")
    rows = _listing(h)
    assert rows["one"]["stage"] == "edited-by-hand"
    assert rows == _truth(h)

    shutil.rmtree(h.task_dir("two"))
    rows = _listing(h)
    assert "two" not in rows
    assert rows == _truth(h)

    # specdacular's own folder, copied in with its times kept (copy2): a task specd has not run
    spd = h.root / "elsewhere" / "spd"
    spd.mkdir(parents=True)
    (spd / "config.json").write_text(json.dumps({"task_name": "spd", "stage": "discussion"}), encoding="utf-8")
    (spd / "FEATURE.md").write_text("# Feature: spd\n", encoding="utf-8")
    time.sleep(SETTLE)
    shutil.copytree(spd, h.task_dir("spd"))
    shutil.copytree(h.task_dir("three"), h.task_dir("four"))  # a finished task's folder, copied whole
    rows = _listing(h)
    assert rows["spd"]["status"] == "NOT_STARTED"
    assert rows["four"]["status"] == "COMPLETE"
    assert rows == _truth(h)

    state = h.task_dir("three") / ".pipeline-state.json"
    with state.open("r+", encoding="utf-8") as handle:  # in place: same inode, same size
        text = handle.read().replace('"COMPLETE"', '"CANCELLED"')
        handle.seek(0)
        handle.write(text)
    rows = _listing(h)
    assert rows["three"]["status"] == "CANCELLED"
    assert rows == _truth(h)


def test_a_deleted_damaged_or_torn_index_is_made_again_without_a_word(h: Harness) -> None:
    project = _project(h, "one", "two")
    good = _listing(h)
    cache = project.specd_dir / ".cache"
    whole = (cache / store.NAME).read_bytes()
    damage = {"deleted": None, "junk": b"this is not a database\n" * 400, "torn": whole[:len(whole) // 2],
              "empty": b""}
    for name, content in damage.items():
        for path in cache.glob(store.NAME + "*"):
            path.unlink()
        if content is not None:
            (cache / store.NAME).write_bytes(content)
        assert _listing(h) == good, name
        assert set(indexed(project.specd_dir)) == {str(h.task_dir(t)) for t in ("one", "two")}, name


def test_another_schema_is_replaced(h: Harness) -> None:
    project = _project(h, "one")
    good = all_status(project)
    cache = project.specd_dir / ".cache"
    for path in cache.glob(store.NAME + "*"):
        path.unlink()
    with sqlite3.connect(cache / store.NAME) as db:
        db.execute("CREATE TABLE rows (other TEXT)")
        db.execute(f"PRAGMA user_version={store.SCHEMA + 1}")
    assert all_status(project) == good
    assert str(h.task_dir("one")) in indexed(project.specd_dir)


KILLED_IN_A_WRITE = """
import os, signal, sys
from pathlib import Path
from specd.tasks.readmodel import signature, store
cache, folder = sys.argv[1], sys.argv[2]
sig, _ = signature.marks(folder)
db = store.connect(cache)
db.execute("BEGIN IMMEDIATE")
bogus = '{"task": "one", "status": "BOGUS"}'
db.execute("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, 0)", (folder, sig[0], sig[1], bogus, bogus))
db.execute("DELETE FROM rows WHERE folder != ?", (folder,))
os.kill(os.getpid(), signal.SIGKILL)  # before the commit
"""


def test_kill_9_in_the_middle_of_a_write_leaves_the_rows_as_they_were(h: Harness, tmp_path: Path) -> None:
    project = _project(h, "one", "two")
    good = all_status(project)
    before = indexed(project.specd_dir)
    script = tmp_path / "killed.py"
    script.write_text(KILLED_IN_A_WRITE, encoding="utf-8")
    child = subprocess.run([sys.executable, str(script), str(project.specd_dir / ".cache"), str(h.task_dir("one"))],
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False, timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert indexed(project.specd_dir) == before  # the transaction never happened
    assert all_status(project) == good
    assert "BOGUS" not in json.dumps(all_status(project))


KEEPS_WRITING = """
import json, sys, time  # noqa: E401
from pathlib import Path
from specd.tasks.project import Project
from specd.tasks.status import all_status
root, tasks = Path(sys.argv[1]), sys.argv[2:]
n = 0
while True:
    n += 1
    for task in tasks:
        config = root / ".specd" / "tasks" / task / "config.json"
        data = json.loads(config.read_text())
        config.with_name("config.tmp").write_text(json.dumps({**data, "stage": f"round-{n}"}))
        config.with_name("config.tmp").replace(config)  # whole or not at all: only the index is under test
    time.sleep(0.15)  # past the racy window, so the listing writes the rows it builds
    all_status(Project(root), full=n % 2 == 0)
"""


def test_kill_9_at_any_moment_of_the_listings_writes_leaves_a_right_listing(h: Harness, tmp_path: Path) -> None:
    tasks = [f"t{i}" for i in range(6)]
    project = _project(h, *tasks)
    all_status(project)
    script = tmp_path / "writes.py"
    script.write_text(KEEPS_WRITING, encoding="utf-8")
    pick = random.Random(33)
    for _ in range(4):
        child = subprocess.Popen([sys.executable, str(script), str(h.root), *tasks],
                                 env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        time.sleep(0.3 + pick.random())  # where it dies varies; what the listing says must not
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        stages = {t: json.loads((h.task_dir(t) / "config.json").read_text())["stage"] for t in tasks}
        for full in (True, False, True):
            rows = {row["task"]: row for row in all_status(project, full=full)}
            assert {t: rows[t]["status"] for t in tasks} == dict.fromkeys(tasks, "COMPLETE")
            if full:
                assert {t: rows[t]["stage"] for t in tasks} == stages
    time.sleep(SETTLE)
    all_status(project)
    assert set(indexed(project.specd_dir)) == {str(h.task_dir(t)) for t in tasks}  # the index works on


LISTS = """
import json, sys  # noqa: E401
from pathlib import Path
from specd.tasks.project import Project
from specd.tasks.status import all_status
root = Path(sys.argv[1])
for n in range(8):
    rows = all_status(Project(root), full=n % 2 == 0)
    assert all(row["status"] == "COMPLETE" for row in rows), rows
print("ok")
"""


def test_listings_at_the_same_time_share_the_index(h: Harness, tmp_path: Path) -> None:
    """A listing that finds the index busy (another one writing) builds its rows and leaves the writing to a
    later one: never an error, never a wrong row."""
    tasks = [f"t{i}" for i in range(5)]
    project = _project(h, *tasks)
    for path in (project.specd_dir / ".cache").glob(store.NAME + "*"):
        path.unlink()  # every listing starts by making the database: the race on its tables too
    script = tmp_path / "lists.py"
    script.write_text(LISTS, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    children = [subprocess.Popen([sys.executable, str(script), str(h.root)], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert (child.returncode, out.strip()) == (0, "ok"), err
    assert set(indexed(project.specd_dir)) == {str(h.task_dir(t)) for t in tasks}


def test_an_unfinished_task_s_row_follows_an_edit_of_the_pipeline_file(h: Harness) -> None:
    """Unfinished rows are kept with their plans, under the shared inputs they were worked out from: an edit of
    pipeline.json (in place or replaced) gives every unfinished task its new plan at the next listing, while a
    finished row is still read from the store."""
    project = _project(h, "done")
    h.new("fresh")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md", "pause": True}]})
    h.new("waits")
    assert h.cont("waits", "--semi-auto").returncode == 3  # held at the gate before b
    time.sleep(SETTLE)
    first = listed(project)
    assert [s["step"] for s in first["fresh"]["plan"]] == ["a", "b"]
    assert [s["step"] for s in first["waits"]["plan"]] == ["b"]
    planned = {folder: whole for folder, (_, whole) in indexed(project.specd_dir).items()}
    assert set(planned) == {str(h.task_dir(t)) for t in ("done", "fresh", "waits")}  # all three kept
    assert listed(project) == first

    pipeline = project.specd_dir / "pipeline.json"
    data = json.loads(pipeline.read_text(encoding="utf-8"))
    data["pipelines"]["main"].append({"name": "c", "workflow": "w.md"})
    with pipeline.open("r+", encoding="utf-8") as handle:  # in place: the same inode
        handle.write(json.dumps(data))
        handle.truncate()
    rows = listed(project)
    assert [s["step"] for s in rows["fresh"]["plan"]] == ["a", "b", "c"]
    assert [s["step"] for s in rows["waits"]["plan"]] == ["b", "c"]
    assert rows == listed(project, cold=True)
    time.sleep(SETTLE)
    assert listed(project) == rows  # kept again under the new marks
    h.pipeline({"main": [{"name": "b", "workflow": "w.md"}, {"name": "a", "workflow": "w.md"}]})
    rows = listed(project)
    assert [s["step"] for s in rows["fresh"]["plan"]] == ["b", "a"]
    assert rows == listed(project, cold=True)


def test_a_run_that_stops_writes_its_own_row_and_the_next_listing_reads_it(h: Harness) -> None:
    """At a gate and at the end, the run keeps its task's row itself: the listing straight after it reads the
    row from the store (a mark put into the kept row shows) and says what the files say."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md", "pause": True}]})
    project = Project(h.root)
    h.new("t")
    folder = str(h.task_dir("t"))
    assert listed(project)["t"]["status"] == "NOT_STARTED"  # a listing makes the store (a run makes none)
    for expected, code in (("WAITING_FOR_HUMAN", 3), ("COMPLETE", 0)):
        assert h.cont("t", "--semi-auto", input="proceed\n" if code == 0 else None).returncode in (code, 0)
        kept = indexed(project.specd_dir)
        assert set(kept) == {folder}, expected
        assert kept[folder][0]["status"] == expected  # no listing ran since: the run wrote it
        shown, whole = kept[folder]
        assert shown["status"] == whole["status"] == expected  # type: ignore[index]
        truth = listed(project, cold=True)["t"]
        assert whole == truth
        with sqlite3.connect(project.specd_dir / ".cache" / store.NAME) as db:
            db.execute("UPDATE rows SET whole = ?", (json.dumps({**truth, "stage": "read-from-the-store"}),))
        assert listed(project)["t"]["stage"] == "read-from-the-store"


def test_the_store_is_its_owner_s_only(tmp_path: Path) -> None:
    """Answers and rows are kept with a digest of the environment's secrets: the database and its WAL files
    are readable by their owner only, whatever the umask, and an older, readable file is made so."""
    folder = tmp_path / ".specd" / "tasks" / "one"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"task_name": "one", "stage": "discussion"}), encoding="utf-8")
    project = Project(tmp_path)
    old = os.umask(0o022)
    try:
        all_status(project)
        cache = project.specd_dir / ".cache"
        (cache / store.NAME).chmod(0o644)  # as an earlier specd left it
        db = store.connect(str(cache))
        assert db is not None
        db.execute("SELECT count(*) FROM rows").fetchone()  # a reader: the WAL's files exist while it is open
        made = sorted(cache.glob(store.NAME + "*"))
        assert [p.name for p in made if p.name.endswith(("-wal", "-shm"))], made
        assert all(p.stat().st_mode & 0o077 == 0 for p in made), [oct(p.stat().st_mode) for p in made]
        db.close()
    finally:
        os.umask(old)
