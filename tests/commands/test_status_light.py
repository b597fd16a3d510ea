"""`specd status` into a pipe, and with --json, never imports rich: that is a third of its start-up. And
`status TASK` whose answer is kept (nothing it came from changed) imports none of what works it out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROBE = ("import json, sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
         "print(json.dumps(sorted(m for m in sys.modules"
         " if m.partition('.')[0] in ('rich', 'jsonschema', 'yaml', 'filelock')"
         " or m.startswith(('specd.pipeline', 'specd.system', 'specd.state', 'specd.engine', 'specd.git',"
         " 'specd.tasks.status', 'specd.tasks.graph', 'specd.redact', 'specd.executors',"
         " 'specd.commands.terminal.plain')))),"
         " file=sys.stderr)\n")
# What working a status out loads; a kept answer loads none of it (specd.tasks.readmodel reads it).
HEAVY = ("jsonschema", "yaml", "filelock", "specd.pipeline.load", "specd.pipeline.model", "specd.system.jail",
         "specd.state.store", "specd.pipeline.cursor", "specd.tasks.status", "specd.tasks.graph", "specd.git",
         "specd.redact", "specd.executors.temporal.record", "specd.commands.terminal.plain")


def loaded(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The modules of note the run imported (the probe's last line on stderr)."""
    found: list[str] = json.loads(result.stderr.strip().splitlines()[-1])
    return found


def specd(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", PROBE, "--project", str(root), *args], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert specd(tmp_path, "init").returncode == 0
    made = specd(tmp_path, "new", "one", "--description", "a task")
    assert made.returncode == 0, made.stderr
    return tmp_path


@pytest.mark.parametrize("args", [("status",), ("status", "one"), ("status", "--json"), ("status", "one", "--json")])
def test_piped_and_json_status_import_no_rich(project: Path, args: tuple[str, ...]) -> None:
    result = specd(project, *args)
    assert result.returncode == 0, result.stderr
    assert not any(m == "rich" or m.startswith("rich.") for m in loaded(result))
    assert "one" in result.stdout


def test_piped_status_of_one_task_is_plain_text_naming_its_status_and_next_step(project: Path) -> None:
    result = specd(project, "status", "one")
    first = result.stdout.splitlines()[0]
    assert first.split()[:2] == ["one", "NOT_STARTED"]
    assert "next:" in result.stdout
    assert "[bold]" not in result.stdout  # no markup
    assert "┃" not in result.stdout  # no box drawing


@pytest.mark.parametrize("as_json", [False, True])
def test_a_kept_answer_loads_neither_the_pipeline_nor_the_run_state_nor_redaction(project: Path,
                                                                                   as_json: bool) -> None:
    args = ("status", "one", *(["--json"] if as_json else []))
    first = specd(project, *args)
    assert "specd.tasks.status" in loaded(first)  # worked out: nothing was kept yet
    deadline = time.monotonic() + 60
    while "specd.tasks.status" in loaded(result := specd(project, *args)):  # kept once its inputs are 0.1 s old
        assert time.monotonic() < deadline, "the answer was never kept"
        time.sleep(0.2)
    assert result.returncode == 0
    assert result.stdout == first.stdout
    assert [m for m in loaded(result) if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))] == []
