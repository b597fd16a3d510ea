"""Six inputs that used to end in a traceback, through the real CLI (`python -m specd` subprocesses).

Each is written into task `t` (or the project files) of a project that also has task `u`. `specd continue t`
is a clear error with exit 2 that names the file, the place and the fix, and `specd status` still lists
every task (the bad one as an error row at worst), with `specd status u` unaffected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forked
import pytest

WORKFLOW = "# w\n\nDo it.\n"
PIPELINE = {"schema_version": "1.0", "mode": "auto",
            "pipelines": {"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]}}


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".specd" / "workflows").mkdir(parents=True)
        self.workflow = root / ".specd" / "workflows" / "w.md"
        self.workflow.write_text(WORKFLOW)
        self.pipeline = root / ".specd" / "pipeline.json"
        self.pipeline.write_text(json.dumps(PIPELINE))
        self.env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}
        for task in ("t", "u"):
            assert self.specd("new", task, "--description", "x").returncode == 0
        blocked = self.specd("continue", "t", "--agent", "cmd:false")  # a run state with a failure in it
        assert blocked.returncode == 1, blocked.stderr
        self.state_file = root / ".specd" / "tasks" / "t" / ".pipeline-state.json"

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=120)

    def edit_state(self, change: Callable[[dict[str, Any]], None]) -> None:
        data = json.loads(self.state_file.read_text())
        change(data)
        self.state_file.write_text(json.dumps(data))


def _long_workflow(p: Project) -> None:
    data = json.loads(p.pipeline.read_text())
    data["pipelines"]["main"][1]["workflow"] = "x" * 300 + ".md"
    p.pipeline.write_text(json.dumps(data))


def _nul(p: Project) -> None:
    p.workflow.write_text("---\ndescription: a\x00b\n---\n# w\n\nDo it.\n")


def _huge_int(p: Project) -> None:
    p.workflow.write_text("---\ndescription: w\nmax: " + "9" * 5000 + "\n---\n# w\n\nDo it.\n")


def _no_phase(p: Project) -> None:
    p.edit_state(lambda d: d.update(current={"step": "a", "pipeline": "main", "visit": 1, "attempt": 1}))


def _unknown_pipeline(p: Project) -> None:
    p.edit_state(lambda d: d["cursor"][0].update(pipeline="nowhere"))


# (input, what the error must name: the file, then the place)
CASES: dict[str, tuple[Callable[[Project], None], str, str]] = {
    "300-character workflow name": (_long_workflow, "pipeline.json", "pipelines.main[1].workflow"),
    "NUL byte in frontmatter": (_nul, "w.md", "w.md:2:"),
    "5,000-digit integer in frontmatter": (_huge_int, "w.md", "w.md:3:"),
    "current without phase": (_no_phase, ".pipeline-state.json", "current.phase is missing"),
    "cursor naming an unknown pipeline": (_unknown_pipeline, ".pipeline-state.json", "cursor[0].pipeline"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_input_is_a_clear_error_and_status_still_lists_every_task(tmp_path: Path, case: str) -> None:
    spoil, file, place = CASES[case]
    project = Project(tmp_path / "proj")
    spoil(project)

    result = project.specd("continue", "t", "--agent", "cmd:true")

    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert file in result.stderr
    assert place in result.stderr
    assert "fix:" in result.stderr
    listing = project.specd("status")
    assert listing.returncode == 0, listing.stderr
    assert "Traceback" not in listing.stderr
    rows = {line.split()[0]: line.split()[1] for line in listing.stdout.splitlines()[1:] if line.strip()}
    assert set(rows) == {"t", "u"}
    assert rows["u"] == "NOT_STARTED"
    other = project.specd("status", "u", "--json")
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["status"] == "NOT_STARTED"


def test_a_long_step_name_in_the_run_state_breaks_nothing(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    project.edit_state(lambda d: d["cursor"][0].update(step="x" * 300))

    listing = project.specd("status")
    single = project.specd("status", "t")
    resumed = project.specd("continue", "t", "--agent", "cmd:true")

    for result in (listing, single, resumed):
        assert "Traceback" not in result.stderr
        assert result.returncode in (0, 2), result.stderr
    assert listing.returncode == 0
    assert {line.split()[0] for line in listing.stdout.splitlines()[1:]} == {"t", "u"}


def test_a_lone_surrogate_in_a_failure_reason_is_read_and_written(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    text = project.state_file.read_text()
    assert '"reason": "step' in text
    project.state_file.write_text(text.replace('"reason": "step', '"reason": "\\ud800 step', 1))

    single = project.specd("status", "t")
    listing = project.specd("status")
    as_json = project.specd("status", "t", "--json")

    for result in (single, listing, as_json):
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
    assert "\ufffd step 'a' failed" in single.stdout  # the lone half of a pair becomes U+FFFD
    assert json.loads(as_json.stdout)["reason"].startswith("\ufffd step 'a' failed")

    # Written by a run too: an agent's result file whose summary and outcome hold lone surrogates.
    agent = tmp_path / "agent.sh"
    agent.write_text('printf \'{"outcome": "x\\\\ud800y", "summary": "s\\\\udfff"}\' > "$SPECD_RESULT"\n')
    blocked = project.specd("continue", "u", "--agent", f"cmd:sh {agent}")
    assert blocked.returncode == 1, blocked.stderr
    assert "Traceback" not in blocked.stderr
    state = json.loads(project.specd("status", "u", "--json").stdout)
    assert state["status"] == "BLOCKED"
    assert "reported outcome" in state["reason"]
    logs = project.specd("logs", "u")
    assert logs.returncode == 0, logs.stderr
    assert "Traceback" not in logs.stderr
