"""A Temporal-run task as its workers last pushed it: the task branch fetched from the shared remote into a ref
of specd's own (``refs/specd-temporal/<task>``: the user's branches are never touched), and its ``.specd/``
folder unpacked where the ordinary status code reads it: ``.specd/.cache/temporal/<task>/`` (git-ignored), kept
from one look to the next and unpacked again only when the branch moved. `specd status`, the page and `specd
mcp` share it (one process unpacks at a time); a clone whose ``.specd/`` cannot be written unpacks in a scratch
folder each time, as before.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from specd.executors.temporal.ids import branch
from specd.git.repo import git, git_env
from specd.system.gitsafe import OPTIONS
from specd.tasks.project import Project


def copy_path(project: Project, task: str) -> Path:
    return project.root / ".specd" / ".cache" / "temporal" / task


def fetch_all(project: Project, remote: str, tasks: list[str]) -> set[str] | None:
    """Every task's branch brought here at once, for a listing: one `ls-remote` of the remote's task branches, then
    one fetch of those that moved since (none when nothing did), where a fetch a task cost a round trip to the
    remote each. The tasks whose branch the remote has; None when it could not be asked (each task then fetches
    its own)."""
    said = git(project.root, "ls-remote", "--heads", remote, "refs/heads/specd/*")
    if said.returncode != 0:
        return None
    heads = {ref.removeprefix("refs/heads/specd/"): commit for commit, _, ref in
             (line.partition("\t") for line in said.stdout.splitlines())}
    there = [task for task in tasks if task in heads]
    moved = [task for task in there if _local(project, task) != heads[task]]
    if moved and git(project.root, "fetch", "--quiet", remote,
                     *[f"+refs/heads/{branch(task)}:{ref(task)}" for task in moved]).returncode != 0:
        return None
    return set(there)


def read(project: Project, remote: str, task: str, look: Callable[[Project], dict[str, Any]],
         fetched: bool = False) -> dict[str, Any] | None:
    """``look`` applied to the pushed ``.specd/`` of the task; None when the remote has no such branch.
    ``fetched``: ``fetch_all`` brought the branch here already."""
    into = copy_path(project, task)
    try:
        into.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(into) + ".lock"):  # read under it too: no other process swaps the copy meanwhile
            return look(Project(into)) if unpack(project, remote, task, into, fetched) else None
    except PermissionError:  # a read-only clone: a scratch copy, made for this look alone
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "copy"
            return look(Project(copy)) if unpack(project, remote, task, copy, fetched) else None


def ref(task: str) -> str:
    """Where the branch its workers pushed is fetched to: a ref of specd's own, never a branch of the user's."""
    return f"refs/specd-temporal/{task}"


def _local(project: Project, task: str) -> str:
    return git(project.root, "rev-parse", "--verify", "--quiet", ref(task)).stdout.strip()


def unpack(project: Project, remote: str, task: str, into: Path, fetched: bool = False) -> bool:
    """The task's branch fetched (unless ``fetched``) and its ``.specd/`` unpacked at ``into`` (a project's root),
    replacing what was there whole (unpacked beside it, then renamed: a reader sees the old copy or the new one);
    left as it is when the branch has not moved since. False when the remote has no such branch. Callers that
    share ``into`` hold its lock (``read``, the page's worker thread)."""
    fetched_to = ref(task)
    if not fetched and git(project.root, "fetch", "--quiet", remote,
                           f"+refs/heads/{branch(task)}:{fetched_to}").returncode != 0:
        return False
    commit = _local(project, task)
    if not commit:
        return False
    mark = into.with_name(into.name + ".commit")
    if into.is_dir() and mark.is_file() and mark.read_text(encoding="utf-8") == commit:
        return True
    done = git_bytes(project.root, "archive", "--format=tar", fetched_to, ".specd")
    if done is None:
        return False
    fresh, old = into.with_name(into.name + ".new"), into.with_name(into.name + ".old")
    for leftover in (fresh, old):
        shutil.rmtree(leftover, ignore_errors=True)
    fresh.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(done)) as archive:
        archive.extractall(fresh, filter="data")
    if into.exists():
        into.rename(old)
    fresh.rename(into)
    shutil.rmtree(old, ignore_errors=True)
    mark.write_text(commit, encoding="utf-8")
    return True


def git_bytes(root: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", *OPTIONS, *args], cwd=root, capture_output=True, check=False,
                          env=git_env())
    return done.stdout if done.returncode == 0 else None
