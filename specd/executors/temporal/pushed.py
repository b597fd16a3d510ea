"""A Temporal-run task as its workers last pushed it: the task branch fetched from the shared remote into a ref
of specd's own (``refs/specd-temporal/<task>``: the user's branches are never touched), and its ``.specd/``
folder unpacked in a scratch folder, where the ordinary status code reads it.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specd.executors.temporal.ids import branch
from specd.git.repo import git, git_env
from specd.tasks.project import Project


def read(project: Project, remote: str, task: str, look: Callable[[Project], dict[str, Any]]) -> dict[str, Any] | None:
    """``look`` applied to the pushed ``.specd/`` of the task; None when the remote has no such branch."""
    ref = f"refs/specd-temporal/{task}"
    if git(project.root, "fetch", "--quiet", remote, f"+refs/heads/{branch(task)}:{ref}").returncode != 0:
        return None
    done = git_bytes(project.root, "archive", "--format=tar", ref, ".specd")
    if done is None:
        return None
    with tempfile.TemporaryDirectory() as scratch, tarfile.open(fileobj=io.BytesIO(done)) as archive:
        archive.extractall(scratch, filter="data")
        return look(Project(Path(scratch)))


def git_bytes(root: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False, env=git_env())
    return done.stdout if done.returncode == 0 else None
