"""specd's git lock is one per work tree: runs sharing a tree take turns (one index), while a run in a worktree of
its own (`specd run`) does not wait for another tree's commits."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock, Timeout
from git_harness import plain_git

from specd.git.repo import Repo

HOLD = """
import sys
from pathlib import Path
from specd.git.repo import Repo
repo = Repo.open(Path(sys.argv[1]))
with repo.locked():
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def _repository(tmp_path: Path) -> tuple[Path, Path]:
    main = tmp_path / "main"
    main.mkdir()
    plain_git(main, "init", "-q", "-b", "main")
    (main / "a.txt").write_text("a\n", encoding="utf-8")
    plain_git(main, "add", "a.txt")
    plain_git(main, "commit", "-q", "-m", "a")
    plain_git(main, "worktree", "add", "-q", "-b", "specd/t", str(tmp_path / "wt"), "HEAD")
    return main, tmp_path / "wt"


@contextlib.contextmanager
def _held_by_another_process(tree: Path) -> Iterator[None]:
    """While inside, another process holds ``tree``'s lock as a run would."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tree)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdin is not None
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def _takes_at_once(repo: Repo) -> bool:
    """Whether ``repo.locked()`` is entered without waiting for anyone (run aside: a wait must not hang us)."""
    entered = threading.Event()

    def take() -> None:
        with repo.locked():
            entered.set()

    worker = threading.Thread(target=take, daemon=True)
    worker.start()
    return entered.wait(timeout=30)  # generous: only a wait for the other process runs into it


def test_a_worktree_run_commits_while_another_tree_holds_its_lock(tmp_path: Path) -> None:
    main, wt = _repository(tmp_path)
    with _held_by_another_process(wt):
        mine = Repo.open(main)
        assert mine is not None
        assert _takes_at_once(mine)  # the main tree's lock is its own


def test_runs_in_one_tree_still_take_turns(tmp_path: Path) -> None:
    _, wt = _repository(tmp_path)
    repo = Repo.open(wt)
    assert repo is not None
    assert repo.git_dir is not None
    assert repo.git_dir != repo.common_dir  # a worktree's own git folder, under .git/worktrees/
    lock = repo.git_dir / "specd-git.lock"
    with _held_by_another_process(wt), pytest.raises(Timeout):
        FileLock(str(lock), timeout=0.2).acquire()  # the same tree's lock: held by the other run
    with FileLock(str(lock), timeout=5):
        pass  # free again once that run let go
