"""`specd status` into a pipe, and with --json, never imports rich: that is a third of its start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = ("import sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
         "print('rich imported' if any(m == 'rich' or m.startswith('rich.') for m in sys.modules) else 'no rich',"
         " file=sys.stderr)\n")


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
    assert result.stderr.strip().splitlines()[-1] == "no rich"
    assert "one" in result.stdout


def test_piped_status_of_one_task_is_plain_text_naming_its_status_and_next_step(project: Path) -> None:
    result = specd(project, "status", "one")
    first = result.stdout.splitlines()[0]
    assert first.split()[:2] == ["one", "NOT_STARTED"]
    assert "next:" in result.stdout
    assert "[bold]" not in result.stdout  # no markup
    assert "┃" not in result.stdout  # no box drawing
