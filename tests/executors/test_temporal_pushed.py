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


def test_a_listing_brings_every_tasks_branch_with_one_look_at_the_remote_and_one_fetch_of_those_that_moved(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Twenty tasks on Temporal were twenty fetches at every `specd status` and every refresh of the page: a round
    trip to the remote each. Now one `ls-remote`, then one fetch of the branches that moved (none, when none did)."""
    from specd.executors.temporal import pushed as module

    remote, worker, here = tmp_path / "remote.git", tmp_path / "worker", tmp_path / "here"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    for clone in (worker, here):
        _git(tmp_path, "init", "-q", "-b", "main", str(clone))
        _git(clone, "remote", "add", "origin", str(remote))
    for task in ("a", "b"):
        note = worker / ".specd" / "tasks" / task / "STATE.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"{task} after s1")
        _git(worker, "add", "-A")
        _git(worker, "commit", "-q", "-m", f"docs({task}): s1")
        _git(worker, "push", "-q", "origin", f"HEAD:refs/heads/specd/{task}")
    project, asked = Project(here), []
    real = module.git

    def seen(where: Path, *args: str) -> Any:
        if args[0] in ("ls-remote", "fetch"):
            asked.append(args[0])
        return real(where, *args)

    monkeypatch.setattr(module, "git", seen)
    assert pushed.fetch_all(project, str(remote), ["a", "b", "never-pushed"]) == {"a", "b"}
    assert asked == ["ls-remote", "fetch"]
    asked.clear()
    assert pushed.fetch_all(project, str(remote), ["a", "b"]) == {"a", "b"}
    assert asked == ["ls-remote"]  # nothing moved: nothing fetched

    def look(copy: Project) -> dict[str, Any]:
        return {"state": (copy.root / ".specd" / "tasks" / "b" / "STATE.md").read_text()}

    asked.clear()
    assert pushed.read(project, str(remote), "b", look, fetched=True) == {"state": "b after s1"}
    assert asked == []  # the listing fetched it: reading its copy asks the remote nothing
    assert pushed.fetch_all(project, "/nowhere/remote.git", ["a"]) is None  # the remote cannot be asked
