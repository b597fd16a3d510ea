"""A broken pipeline file does not lock the user out of their tasks, through the real CLI.

`status` lists every task and names the broken file once; `logs`, `approve`, `reject`, `skip` and
`cancel` work (reject and skip use the copy of the pipeline the run last loaded); `cancel` of a live run
exits 0 while the cancelled run exits 4. Broken means invalid JSON or a schema error (an unknown key).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKFLOW = "# w\n\nDo it.\n"
GOOD = {"schema_version": "1.0", "mode": "auto", "pipelines": {"main": [
    {"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md", "pause_in_semi_auto": True},
    {"name": "c", "workflow": "w.md"}]}}
BROKEN = {
    "invalid JSON": '{"schema_version": "1.0", "pipelines": {\n',
    "schema error": json.dumps({**GOOD, "pipelines": {"main": [{"name": "a", "workflow": "w.md", "enabeld": False}]}},
                               indent=1),
}


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / ".specd" / "workflows" / "w.md").write_text(WORKFLOW)
        self.pipeline = root / ".specd" / "pipeline.json"
        self.pipeline.write_text(json.dumps(GOOD))
        self.env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "specd", "--project", str(self.root), *args]

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), capture_output=True, text=True, env=self.env, cwd=self.root,
                              timeout=120, stdin=subprocess.DEVNULL, check=False)

    def ok(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = self.specd(*args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        return result

    def state(self, task: str) -> dict[str, object]:
        return json.loads(self.ok("status", task, "--json").stdout)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


def _waiting_at_b(project: Project, task: str) -> None:
    project.ok("new", task, "--description", "x")
    held = project.specd("continue", task, "--semi-auto", "--agent", "cmd:true")
    assert held.returncode == 3, held.stderr


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_status_logs_and_answers_work_with_a_broken_pipeline_file(project: Project, kind: str) -> None:
    for task in ("t", "u", "v"):
        _waiting_at_b(project, task)
    project.ok("new", "fresh", "--description", "never run")
    project.pipeline.write_text(BROKEN[kind])

    listing = project.ok("status")
    assert listing.stderr.count("pipeline file is broken") == 1
    assert str(project.pipeline) in listing.stderr
    for task in ("t", "u", "v", "fresh"):
        assert task in listing.stdout
    assert "WAITING_FOR_HUMAN" in listing.stdout
    rows = {row["task"]: row for row in json.loads(project.ok("status", "--json").stdout)["tasks"]}
    assert rows["t"]["status"] == "WAITING_FOR_HUMAN"
    assert rows["fresh"]["status"] == "NOT_STARTED"
    assert "gate before 'b'" in project.ok("logs", "t").stdout

    assert "runs when the task goes on" in project.ok("approve", "t").stdout
    rejected = project.ok("reject", "u", "--note", "again")
    assert "step 'a' runs again" in rejected.stdout
    assert "the copy of it this run last loaded was used" in rejected.stdout
    skipped = project.ok("skip", "v")
    assert "counts as finished" in skipped.stdout
    assert "it is CANCELLED" in project.ok("cancel", "fresh").stdout

    assert project.state("t")["status"] == "IN_PROGRESS"
    assert project.state("u")["status"] == "IN_PROGRESS"
    assert project.state("fresh")["status"] == "CANCELLED"
    project.pipeline.write_text(json.dumps(GOOD))  # fixed: the answers given meanwhile take effect
    project.ok("continue", "v", "--agent", "cmd:true")
    steps = [(row["step"], row["outcome"]) for row in project.state("v")["history"]]  # type: ignore[union-attr]
    assert steps == [("a", "done"), ("b", "skipped"), ("c", "done")]


def test_cancel_of_a_live_run_with_a_broken_pipeline_exits_0_and_the_run_exits_4(project: Project) -> None:
    project.ok("new", "t", "--description", "x")
    run = subprocess.Popen(project.argv("continue", "t", "--agent", "cmd:sleep 60"), env=project.env,
                           cwd=project.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while "running (pid" not in project.specd("status", "t").stdout:
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.2)
        project.pipeline.write_text(BROKEN["invalid JSON"])

        cancelled = project.specd("cancel", "t")

        assert cancelled.returncode == 0, cancelled.stderr
        assert "stopped the run" in cancelled.stdout
        out, err = run.communicate(timeout=60)
        assert run.returncode == 4, err  # a cancelled run is not a success: `continue t && deploy` stops here
        assert "Traceback" not in err
        assert project.state("t")["status"] == "CANCELLED"
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
