"""The status index never shows a stale row: every input of a kept row, changed in any way (in place, with
its modification time put back, or made where it was missing), makes the listing build the row again."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from brain_harness import Harness
from index_rows import indexed, raw_text

from specd.tasks.phases import PHASE_FOLDERS
from specd.tasks.project import Project
from specd.tasks.readmodel import signature
from specd.tasks.readmodel.rows import RACY_NS
from specd.tasks.status import all_status


def _settle() -> None:
    # Rows built from files changed within the racy window are not kept; wait it out (change times cannot
    # be set back, so there is no faking it).
    time.sleep(2 * RACY_NS / 1e9)


def _project(h: Harness, *tasks: str) -> Project:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    for task in tasks:
        h.new(task)
        assert h.cont(task).returncode == 0
    _settle()
    return Project(h.root)


def _in_place(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` in place (same inode) with ``old`` replaced, and put its modification time back."""
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
        handle.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_ino == before.st_ino


def _both(project: Project) -> tuple[dict[str, dict], dict[str, dict]]:
    """The table's rows and the whole rows, by task."""
    light = {row["task"]: row for row in all_status(project, full=False)}
    full = {row["task"]: row for row in all_status(project)}
    return light, full


def test_each_watched_file_made_or_edited_in_place_changes_the_signature(h: Harness) -> None:
    project = _project(h, "t")
    folder = str(h.task_dir("t"))
    assert signature.PHASE_FOLDERS == PHASE_FOLDERS  # written out there, to keep the check's imports few
    for i, name in enumerate(signature.WATCHED):
        sig, _ = signature.marks(folder)  # type: ignore[misc]
        assert signature.still(folder, sig)
        path = Path(folder, name)
        if name in signature.PHASE_FOLDERS:
            path.mkdir()
        else:
            path.write_text("{}" if i < 2 else "x", encoding="utf-8")
        assert not signature.still(folder, sig), f"{name} made"
        sig, _ = signature.marks(folder)  # type: ignore[misc]
        if name in signature.PHASE_FOLDERS:
            (path / "phase-01").mkdir()  # a phase folder added inside: only the phases folder's time moves
        else:
            _in_place(path, path.read_text(encoding="utf-8"), "[]" if i < 2 else "y")  # same size
        assert not signature.still(folder, sig), f"{name} edited in place"
    assert signature.task_folders(project)["t"][0][0] == folder


def test_the_listing_follows_every_input_of_a_kept_row(h: Harness) -> None:
    project = _project(h, "t", "other")
    light, full = _both(project)  # builds and keeps both rows
    assert light["t"]["status"] == full["t"]["status"] == "COMPLETE"
    assert indexed(project.specd_dir)[str(h.task_dir("t"))][1] is not None  # the shown fields and the whole row

    config = h.task_dir("t") / "config.json"
    stage = json.loads(config.read_text())["stage"]
    _in_place(config, f'"stage": "{stage}"', f'"stage": "{"x" * len(stage)}"')  # same size, same time
    _in_place(config, "{", '{"depends_on": ["other"], ')
    light, full = _both(project)
    assert full["t"]["stage"] == "x" * len(stage)
    assert light["t"]["needs"] == full["t"]["needs"] == ["other"]

    state = h.task_dir("t") / ".pipeline-state.json"
    updated = json.loads(state.read_text())["updated_at"]
    _in_place(state, updated, updated.replace("20", "19", 1))  # same size, same time
    light, full = _both(project)
    assert light["t"]["updated_at"] == full["t"]["updated_at"] == updated.replace("20", "19", 1)
    _in_place(state, '"COMPLETE"', '"CANCELLED"')
    assert _both(project)[0]["t"]["status"] == "CANCELLED"

    roadmap = h.task_dir("t") / "ROADMAP.md"
    roadmap.write_text("# Roadmap\n\n### Phase 1: One\n", encoding="utf-8")
    assert _both(project)[1]["t"]["phases"] == ["01"]
    _settle()
    _both(project)
    _in_place(roadmap, "### Phase 1: One\n", "### Phase 1: One\n\n### Phase 2: Two\n")
    assert _both(project)[1]["t"]["phases"] == ["01", "02"]

    (h.task_dir("t") / "phases" / "phase-03").mkdir(parents=True)
    assert _both(project)[1]["t"]["phases"] == ["01", "02", "03"]
    _settle()
    _both(project)
    (h.task_dir("t") / "phases" / "phase-04").mkdir()  # the task folder's own time does not move
    assert _both(project)[1]["t"]["phases"] == ["01", "02", "03", "04"]

    (h.task_dir("other") / "config.json").unlink()  # no longer a task
    light, full = _both(project)
    assert set(light) == set(full) == {"t"}


def test_rows_kept_equal_rows_built(h: Harness) -> None:
    project = _project(h, "t", "u")
    cold_light, cold_full = _both(project)
    warm_light, warm_full = _both(project)
    assert warm_full == cold_full
    assert warm_light == cold_light
    assert all(set(row) <= set(cold_full[task]) for task, row in warm_light.items())
    with sqlite3.connect(project.specd_dir / ".cache" / "index.db") as db:  # rows of another version
        db.execute("UPDATE meta SET value = 'another' WHERE key = 'version'")
    assert _both(project) == (cold_light, cold_full)  # built again
    with sqlite3.connect(project.specd_dir / ".cache" / "index.db") as db:  # a row that is not JSON
        db.execute("UPDATE rows SET shown = '{[' WHERE folder = ?", (str(project.tasks_dir / "t"),))
    assert _both(project) == (cold_light, cold_full)
    (project.specd_dir / ".cache" / "index.db").write_bytes(b"not a database" * 100)  # a broken file
    for name in ("index.db-wal", "index.db-shm"):
        (project.specd_dir / ".cache" / name).unlink(missing_ok=True)
    assert _both(project) == (cold_light, cold_full)
    assert set(indexed(project.specd_dir)) == {str(project.tasks_dir / t) for t in ("t", "u")}  # made afresh


def _cache_text(project: Project) -> str:
    return raw_text(project.specd_dir)


def test_a_secret_in_a_run_state_never_reaches_the_output_or_the_index(h: Harness) -> None:
    """The run states were saved before the secrets were known (raw), as after a .env is added: the rows
    the index keeps are redacted all the same, and so is everything printed, cold and warm."""
    project = _project(h, "leaky", "plain")
    secret = 's3cr3t"with\\a-quote'  # escaped in JSON text: a text match on the JSON alone would miss it
    (h.root / ".env").write_text(f"SERVICE_PASS='{secret}'\n", encoding="utf-8")
    token = "sk-ant-api03-" + "a" * 40
    state = h.task_dir("leaky") / ".pipeline-state.json"
    data = json.loads(state.read_text())
    data.update(status="FAILED", reason=f"died near {secret}", waiting={"api_token": "plainvalue1234"},
                checkpoints=[{"note": "Authorization: Bearer abcdefghijklmnop"}])
    state.write_text(json.dumps(data), encoding="utf-8")
    config = h.task_dir("leaky") / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "stage": token}), encoding="utf-8")
    _settle()
    leaks = (secret, json.dumps(secret)[1:-1], "plainvalue1234", "abcdefghijklmnop", token)
    for args in (("status",), ("status", "--json"), ("status",), ("status", "--json")):  # cold, then warm
        out = h.specd(*args)
        assert out.returncode == 0, out.stderr
        assert not [leak for leak in leaks if leak in out.stdout], args
        assert not [leak for leak in leaks if leak in _cache_text(project)], args
    rows = {row["task"]: row for row in json.loads(h.specd("status", "--json").stdout)["tasks"]}
    assert rows["leaky"]["status"] == "FAILED"
    assert "[REDACTED]" in rows["leaky"]["reason"]
    assert rows["leaky"]["waiting"] == {"api_token": "[REDACTED]"}
    assert str(h.task_dir("leaky")) in indexed(project.specd_dir)  # kept, redacted: the warm listings read it

    # A secret learned after the index was written: the kept row still holds it, the output never does.
    later = "learned-later-value-42"
    _in_place(h.task_dir("plain") / ".pipeline-state.json", '"reason": ""', f'"reason": "{later}"')
    _settle()
    assert later in h.specd("status", "--json").stdout  # not a secret yet: shown, and kept
    with (h.root / ".env").open("a", encoding="utf-8") as env:
        env.write(f"OTHER_TOKEN={later}\n")
    for args in (("status",), ("status", "--json")):
        assert later not in h.specd(*args).stdout
