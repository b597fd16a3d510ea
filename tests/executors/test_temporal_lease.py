"""The lease a worker's attempt holds, and the push made under it (specd.git.publish), with real git repositories
and no server: a lapsed lease pushes nothing, a lapsed lease never comes back, and a push only fast-forwards
from exactly what the clone last saw on the remote."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from specd.executors.temporal.lease import Lease
from specd.git import publish
from specd.git.repo import GitFailed, Repo

ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
       "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=False,
                          env={**ENV, "PATH": "/usr/bin:/bin", "HOME": str(where)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def opened(clone: Path) -> Repo:
    repo = Repo.open(clone)
    assert repo is not None
    return repo


def commit(clone: Path, name: str) -> str:
    (clone / name).write_text(name + "\n")
    git(clone, "add", name)
    git(clone, "commit", "-q", "-m", name)
    return git(clone, "rev-parse", "HEAD")


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "specd/a", str(remote))
    first, second = tmp_path / "one", tmp_path / "two"
    git(tmp_path, "clone", "-q", str(remote), str(first))
    git(first, "checkout", "-q", "-b", "specd/a")
    commit(first, "base")
    git(first, "push", "-q", "origin", "specd/a")
    git(tmp_path, "clone", "-q", "-b", "specd/a", str(remote), str(second))
    return remote, first, second


def test_a_lease_lapses_for_good_once_a_renewal_comes_late(tmp_path: Path) -> None:
    lease = Lease(tmp_path / "leases", 0.3)
    assert lease.renew()
    assert publish.expires(lease.path) > time.time()
    time.sleep(0.4)  # a frozen worker: the renewal comes after the lease ended
    assert not lease.renew()
    assert publish.expires(lease.path) == 0.0
    assert not lease.renew()  # never again, however soon the next renewal comes
    assert not lease.held()
    lease.close()
    assert not lease.path.exists()


def test_a_run_whose_lease_lapsed_pushes_nothing(clones: tuple[Path, Path, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    remote, first, _ = clones
    before = git(remote, "rev-parse", "specd/a")
    lease = Lease(tmp_path / "leases", 60)
    monkeypatch.setenv(publish.LEASE, str(lease.path))
    ours = commit(first, "step")
    publish.push(opened(first), "origin")  # held: pushed
    assert git(remote, "rev-parse", "specd/a") == ours
    lease.give_up()
    commit(first, "late")
    with pytest.raises(publish.LeaseLapsed, match="lease on its task lapsed"):
        publish.push(opened(first), "origin")
    assert git(remote, "rev-parse", "specd/a") == ours
    assert ours != before


def test_a_push_fast_forwards_only_from_what_the_clone_last_saw(clones: tuple[Path, Path, Path]) -> None:
    remote, first, second = clones
    theirs = commit(first, "theirs")  # another attempt pushes first
    publish.push(opened(first), "origin")
    commit(second, "ours")  # built on what this clone saw, which is no longer the remote's tip
    with pytest.raises(GitFailed):
        publish.push(opened(second), "origin")
    assert git(remote, "rev-parse", "specd/a") == theirs
    git(second, "fetch", "-q", "origin")  # the ref it expects is now the remote's; HEAD no longer descends from it
    with pytest.raises(GitFailed, match="only a fast-forward"):
        publish.push(opened(second), "origin")
    assert git(remote, "rev-parse", "specd/a") == theirs
