"""A task on Temporal read as its workers pushed it (executors/temporal/pushed.py), with real git: the copy under
``.specd/.cache/temporal/<task>/`` is kept from one look to the next, and unpacked again only when the branch
moved. `specd status` of twenty tasks on Temporal used to archive and unpack each one into a scratch folder at
every call, and the page every five seconds."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from specd.executors.temporal import pushed
from specd.tasks.project import Project
from specd.tasks.setup import init_project


def _git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@x", *args], cwd=where, check=True,
                          capture_output=True, text=True).stdout


def _push(worker: Path, text: str) -> None:
    note = worker / ".specd" / "tasks" / "t" / "STATE.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(text)
    _git(worker, "add", "-A")
    _git(worker, "commit", "-q", "-m", f"docs(t): {text}")
    _git(worker, "push", "-q", "origin", "HEAD:refs/heads/specd/t")


def test_the_pushed_copy_is_kept_until_the_branch_moves(tmp_path: Path) -> None:
    remote, worker, here = tmp_path / "remote.git", tmp_path / "worker", tmp_path / "here"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    for clone in (worker, here):
        _git(tmp_path, "init", "-q", "-b", "main", str(clone))
        _git(clone, "remote", "add", "origin", str(remote))
    _push(worker, "after s1")
    project, seen = Project(here), []
    init_project(project)
    _git(here, "add", "-A")
    _git(here, "commit", "-q", "-m", "specd init")

    def look(copy: Project) -> dict[str, Any]:
        folder = copy.root / ".specd" / "tasks" / "t"
        seen.append(folder.stat().st_ino)
        return {"state": (folder / "STATE.md").read_text()}

    assert pushed.read(project, str(remote), "t", look) == {"state": "after s1"}
    copy = pushed.copy_path(project, "t")
    assert copy == here / ".specd" / ".cache" / "temporal" / "t"
    assert (copy / ".specd" / "tasks" / "t" / "STATE.md").is_file()
    assert pushed.read(project, str(remote), "t", look) == {"state": "after s1"}
    assert seen[0] == seen[1]  # the same copy: not unpacked again
    _push(worker, "after s2")
    assert pushed.read(project, str(remote), "t", look) == {"state": "after s2"}
    assert seen[2] != seen[1]  # the branch moved: unpacked anew, replaced whole
    assert not copy.with_name("t.new").exists()
    assert not copy.with_name("t.old").exists()
    assert pushed.read(project, str(remote), "gone", look) is None  # no such branch on the remote
    assert _git(here, "status", "--porcelain", "--untracked-files=all") == ""  # .specd/.cache is git-ignored
