"""A secret file git tracks: the jail shows it empty, but its committed content is in `.git`, which the agent
reads. The run says so on its first lines, naming the file (never a value), and what to do."""

from __future__ import annotations

import shlex
from pathlib import Path

from git_harness import GitProject, warnings

VALUE = "tracked-" + "Vq93Lx2Rk8Tz4Wm1"
PEEK = "cat .env > seen.txt; git show HEAD:apps/web/.env > shown.txt; true"


def test_a_tracked_env_file_is_named_on_the_runs_first_lines_and_an_untracked_one_is_not(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    g.write(".env", f"LOCAL_ONLY={VALUE}-local\n")  # untracked: hidden, and in no object of .git
    g.write("apps/web/.env", f"API_TOKEN={VALUE}\n")
    g.git("add", "-f", "apps/web/.env")
    g.git("commit", "-q", "-m", "the mistake")
    g.new("t")
    run = g.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(PEEK)}")
    said = warnings(run)
    assert [line for line in said if "tracked by git" in line] == [
        "warning: apps/web/.env is tracked by git: the jail shows it empty, but what was committed of it is in "
        ".git, which the agent can read (git show HEAD:apps/web/.env); take it out of git (git rm --cached, and "
        "out of the history) and change the values it held"]
    assert VALUE not in run.stdout + run.stderr
    # What the warning is about: the file reads empty, its committed content does not.
    assert (g.root / "seen.txt").read_text() == ""
    assert VALUE in (g.root / "shown.txt").read_text()


def test_no_tracked_secret_no_warning(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    g.write(".env", f"LOCAL_ONLY={VALUE}\n")
    g.new("t")
    run = g.specd("continue", "t", "--auto", "--agent", "cmd:true")
    assert run.returncode == 0, run.stderr
    assert [line for line in warnings(run) if "tracked by git" in line] == []
