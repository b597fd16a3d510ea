"""`specd status TASK` printed from its kept answer follows every edit of what it was worked out from.

Each test first waits until the answer is kept (a call that loads no pipeline), then changes one input: the
pipeline file, a workflow file, a task file, the run state, the environment's secrets, a `.env` file. The
next call must print what a call with no kept answer prints, and differ from before where the input shows.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import forked
import pytest

# The CLI in a child Python that says, after it ran, whether the task's status was worked out (a miss) or read.
PROBE = ("import sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
         "    code = done.code\nprint('MEMO', 'miss' if 'specd.tasks.status' in sys.modules else 'hit', code,"
         " file=sys.stderr)\n")
PIPELINE = {"schema_version": "1.0", "pipelines": {"main": [
    {"name": "first", "workflow": "w.md"}, {"name": "second", "workflow": "w.md", "pause_in_semi_auto": True},
    {"name": "third", "workflow": "w.md"}]}}


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
        self.pipeline = root / ".specd" / "pipeline.json"
        self.pipeline.write_text(json.dumps(PIPELINE, indent=1), encoding="utf-8")
        self.env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
        self.env.pop("ANTHROPIC_API_KEY", None)

    def run(self, *args: str) -> tuple[str, str, str]:
        """(stdout, stderr without the probe's line, "hit" or "miss")."""
        done = subprocess.run([sys.executable, "-c", PROBE, "--project", str(self.root), *args], capture_output=True,
                              text=True, env=self.env, cwd=self.root, stdin=subprocess.DEVNULL, timeout=120,
                              check=False)
        *err, probe = done.stderr.splitlines()
        assert probe.startswith("MEMO "), done.stderr
        return done.stdout, "\n".join(err), probe.split()[1]

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=120)

    def settle(self, task: str) -> tuple[str, str]:
        """Ask until the answer is read from what was kept (an answer is kept once its inputs are 0.1 s old)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out, err, how = self.run("status", task)
            if how == "hit":
                assert self.run("status", task, "--json")[2] == "hit"
                return out, err
            time.sleep(0.2)
        raise AssertionError("status TASK never printed a kept answer")

    def follows(self, task: str) -> tuple[str, str]:
        """The answer now, which must be worked out afresh and equal an answer with nothing kept (plain and --json;
        the --json call may read what the plain one just kept)."""
        out, err, how = self.run("status", task)
        as_json = self.run("status", task, "--json")[0]
        assert how == "miss"
        forget(self.root)
        assert self.run("status", task)[:2] == (out, err)
        assert self.run("status", task, "--json")[0] == as_json
        return out, err


def forget(root: Path) -> None:
    """Delete the read model's store (every kept answer with it)."""
    for path in (root / ".specd" / ".cache").glob("index.db*"):
        path.unlink()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    made = Project(tmp_path / "proj")
    assert made.specd("new", "one", "--description", "a task").returncode == 0
    return made


def test_an_edit_of_the_pipeline_file_in_place_shows_at_once(project: Project) -> None:
    before, _ = project.settle("one")
    assert "remaining: first → second → third" in before
    with project.pipeline.open("r+", encoding="utf-8") as handle:  # same size, same inode
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace('"second"', '"sekond"'))
    after, _ = project.follows("one")
    assert "remaining: first → sekond → third" in after


def test_a_removed_workflow_file_breaks_the_pipeline_at_once_and_its_return_mends_it(project: Project) -> None:
    project.settle("one")
    workflow = project.root / ".specd" / "workflows" / "w.md"
    workflow.unlink()
    out, err = project.follows("one")
    assert "the pipeline file is broken" in err
    assert "w.md" in err
    assert "remaining:" not in out
    workflow.write_text("# w\n\nDo it.\n", encoding="utf-8")
    out, err = project.follows("one")
    assert "remaining: first → second → third" in out
    assert err == ""


def test_edits_of_the_task_files_show_at_once(project: Project) -> None:
    project.settle("one")
    project.pipeline.unlink()  # the built-in pipeline, whose steps specdacular's files route to
    out, _ = project.follows("one")
    assert "remaining: discuss → research → plan → phases" in out
    project.settle("one")
    folder = project.root / ".specd" / "tasks" / "one"
    data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    data["stage"] = "research"
    (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    out, _ = project.follows("one")
    assert out.splitlines()[0].split() == ["one", "IN_PROGRESS", "stage", "research"]
    assert "remaining: research → plan → phases" in out
    project.settle("one")
    (folder / "RESEARCH.md").write_text("# Research\n", encoding="utf-8")
    out, _ = project.follows("one")
    assert "remaining: plan → phases" in out
    data["stage"] = "planning"
    (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    project.settle("one")
    (folder / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: Base\n\n### Phase 2: Top\n", encoding="utf-8")
    out, _ = project.follows("one")
    assert "phases: 01, 02" in out
    assert "remaining: plan (01) → execute (01)" in out


def test_a_run_and_an_answer_to_its_gate_show_at_once(project: Project) -> None:
    project.settle("one")
    held = project.specd("continue", "one", "--semi-auto", "--agent", "cmd:true")
    assert held.returncode == 3, held.stderr  # waits at the gate before `second`
    out, _ = project.follows("one")
    assert out.split()[1] == "WAITING_FOR_HUMAN"
    project.settle("one")
    assert project.specd("approve", "one").returncode == 0
    out, _ = project.follows("one")
    assert "approve" not in out.splitlines()[-1]  # the hint no longer says to approve
    project.settle("one")
    assert project.specd("continue", "one", "--auto", "--agent", "cmd:true").returncode == 0
    out, _ = project.follows("one")
    assert out.split()[1] == "COMPLETE"
    assert json.loads(project.run("status", "one", "--json")[0])["history"][-1]["step"] == "third"


def test_a_new_secret_in_the_environment_or_a_dot_env_file_is_masked_at_once(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    task = "zq7secretish-name"  # the only text of ours the answer shows: a stand-in for a leaked key
    assert project.specd("new", task).returncode == 0
    out, _ = project.settle(task)
    assert task in out
    project.env["MY_SERVICE_TOKEN"] = task
    out, _ = project.follows(task)
    assert task not in out
    assert "[REDACTED]" in out
    del project.env["MY_SERVICE_TOKEN"]
    project.settle(task)
    (project.root / ".env").write_text(f"SOMETHING={task}\n", encoding="utf-8")
    out, _ = project.follows(task)
    assert task not in out
    assert "[REDACTED]" in out


def test_a_run_that_holds_or_held_the_lock_is_never_answered_from_what_was_kept(project: Project) -> None:
    project.settle("one")
    owner = project.root / ".specd" / "tasks" / "one" / ".run.lock.owner"
    owner.write_text(json.dumps({"pid": 999_999_999, "host": "elsewhere"}), encoding="utf-8")
    for _ in range(3):
        assert project.run("status", "one")[2] == "miss"


def test_a_deleted_task_is_an_error_not_its_last_answer(project: Project) -> None:
    project.settle("one")
    shutil.rmtree(project.root / ".specd" / "tasks" / "one")
    result = project.specd("status", "one")
    assert result.returncode == 2
    assert "no task 'one'" in result.stderr
    assert result.stdout == ""


def test_an_answer_from_a_file_changed_a_moment_ago_is_not_kept(project: Project) -> None:
    from specd.tasks import readmodel
    from specd.tasks.project import Project as Folder

    folder = Folder(project.root)
    config = project.root / ".specd" / "tasks" / "one" / "config.json"
    project.settle("one")  # every input is old enough now
    settled = readmodel.answer_inputs(folder, "one")
    assert settled is not None
    readmodel.remember_answer(folder, "one", settled, _config(folder), {"out": "o", "json": "{}", "err": []})
    assert readmodel.answer(str(project.root), "one") == {"out": "o", "err": []}
    assert readmodel.answer(str(project.root), "one", "json") == {"json": "{}", "err": []}
    assert readmodel.answer(str(project.root), "one", "drawn") is None  # not kept in that form
    ahead = time.time() + 3600  # as good as written after the marks were taken: within the racy window
    os.utime(config, (ahead, ahead))
    forget(project.root)
    fresh = readmodel.answer_inputs(folder, "one")
    assert fresh is not None
    readmodel.remember_answer(folder, "one", fresh, _config(folder), {"out": "o", "json": "{}", "err": []})
    assert readmodel.answer(str(project.root), "one") is None


def _config(folder: Any) -> Any:
    from specd.pipeline import load_pipeline

    return load_pipeline(folder)


def test_the_temporal_record_is_found_above_the_project_without_git(tmp_path: Path) -> None:
    from specd.executors.temporal import record
    from specd.tasks.project import Project as Folder

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    inner = Folder(tmp_path / "sub" / "proj")
    inner.specd_dir.mkdir(parents=True)
    assert record._path(inner) == tmp_path / ".git" / record.NAME
    assert record.watched(inner) == [inner.root / ".git", tmp_path / "sub" / ".git", tmp_path / ".git",
                                     tmp_path / ".git" / record.NAME]


def test_the_project_root_is_found_as_find_project_finds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.tasks import readmodel
    from specd.tasks.project import find_project

    inner = tmp_path / "proj" / "src" / "deep"
    inner.mkdir(parents=True)
    (tmp_path / "proj" / ".specd").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "proj")
    for here, given in [(inner, None), (tmp_path, None), (tmp_path / "link" / "src", None), (inner, "../.."),
                        (tmp_path, "link"), (tmp_path, "proj/src")]:
        monkeypatch.chdir(here)
        expected = find_project(explicit=None if given is None else Path(given)).root
        assert readmodel.project_root(given) == str(expected), (here, given)


@pytest.mark.parametrize("damage", ['{"version": "0.1.0", "env": "", "marks": [], "texts": {"out": 1, "err": 2}}',
                                    '{"version": "0.1.0", "texts": {"out": "x", "json": "{}", "err": ["y"]}}',
                                    '{"trunc', "[]"])
def test_a_damaged_kept_answer_is_worked_out_afresh(project: Project, damage: str) -> None:
    out, err = project.settle("one")
    with sqlite3.connect(project.root / ".specd" / ".cache" / "index.db") as db:
        db.execute("UPDATE answers SET head = ?, err = ?, out = ? WHERE task = 'one'", (damage, damage, damage))
    assert project.run("status", "one") == (out, err, "miss")
