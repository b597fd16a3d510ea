"""Two attempts of one task on one worker, through the real activity (temporalio's ActivityEnvironment, no
server): a real remote, real clones, real `specd continue` children and the held command agent.

Temporal starts a new attempt once it holds the last one dead (its heartbeats were late), and the new one may
land on the same worker, in the same clone. The older attempt must then stop and push nothing, and the newer
one finishes the task. Heartbeats go on a timer, also while a step prints nothing for a long time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from executor_harness import TIMEOUT, Repo

pytest.importorskip("temporalio")  # the dev extra installs it; CI fails loudly elsewhere when it is missing

from temporalio.exceptions import ApplicationError  # noqa: E402
from temporalio.testing import ActivityEnvironment  # noqa: E402

from specd.executors.temporal.activities import Activities  # noqa: E402
from specd.executors.temporal.seed import seed  # noqa: E402
from specd.executors.temporal.settings import Behaviour  # noqa: E402
from specd.git.repo import git  # noqa: E402
from specd.tasks.project import Project  # noqa: E402

KEY = "0123456789ab"  # a repository key as `specd run` makes one (what it is does not matter here)


def _setup(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Activities, dict[str, Any], Path]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    repo.new("a")
    for key, value in repo.env.items():  # the activity gives its children the worker's environment
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(repo.root)
    assert seed(Project(repo.root), str(remote), "a", set())
    job = {"task": "a", "key": KEY, "heartbeat_timeout": 3}  # how it runs is the worker's own, below
    own = Behaviour(agent=repo.agent(), mode="auto")
    return Activities(tmp_path / "w", str(remote), own, print), job, tmp_path / "w" / KEY / "a"


def _environment(beats: list[Any]) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=3))
    env.on_heartbeat = lambda *details: beats.append(details[0] if details else None)
    return env


async def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


def test_a_later_attempt_on_this_worker_stops_the_older_one_which_pushes_nothing(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    acts, job, clone = _setup(repo, tmp_path, monkeypatch)
    hold = repo.dir / "hold-a-s2"
    hold.write_text("")
    first_beats: list[Any] = []

    async def both() -> tuple[BaseException | dict[str, Any], dict[str, Any]]:
        first = asyncio.create_task(_environment(first_beats).run(acts.run, job))
        await _until(lambda: (clone / "held-a-s2").exists(), "the first attempt never reached s2")
        seen = len(first_beats)
        await asyncio.sleep(2.5)  # the held step prints nothing: heartbeats go on regardless
        assert len(first_beats) > seen, "no heartbeat while the step was quiet"
        assert {"step": "s2"} in first_beats
        second = asyncio.create_task(_environment([]).run(acts.run, job))
        await _until(first.done, "the older attempt was never stopped")
        hold.unlink()
        older: BaseException | dict[str, Any]
        try:
            older = await first
        except BaseException as exc:  # noqa: BLE001 (what it raised is the assertion)
            older = exc
        return older, await second

    older, newer = asyncio.run(both())
    assert isinstance(older, ApplicationError), older
    assert newer["status"] == "COMPLETE", newer
    repo.git("fetch", "-q", "origin", "+refs/heads/specd/*:refs/remotes/origin/specd/*")
    state = repo.git("show", "origin/specd/a:.specd/tasks/a/.pipeline-state.json")
    assert '"COMPLETE"' in state
    ledger = (clone / "ledger-a.txt").read_text().split("\n")
    finished = [line.split()[1] for line in ledger if line]
    assert sorted(finished) == ["s1", "s2", "s3"]  # s2 ran to its end once: the stopped attempt's never finished


def _two_clones(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    from specd.executors.temporal import clones

    _setup(repo, tmp_path, monkeypatch)
    remote = str(tmp_path / "remote.git")
    return tuple(clones.prepare(tmp_path / worker, remote, "k", "a", []) for worker in ("w0", "w1"))  # type: ignore[return-value]


def _commit(clone: Any, name: str, subject: str) -> None:
    (clone.path / name).write_text(subject + "\n")
    for args in (("add", name), ("-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "-m", subject)):
        subprocess.run(["git", *args], cwd=clone.path, check=True, capture_output=True)


def _beaten(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, theirs: str) -> Any:
    """Two clones of task a: the first pushes a commit with subject ``theirs``; the second, which has a step
    commit of its own, is returned, its push still to come."""
    from specd.executors.temporal import clones

    first, second = _two_clones(repo, tmp_path, monkeypatch)
    _commit(first, "one.txt", theirs)
    clones.push(first)
    _commit(second, "two.txt", "docs(a): plan complete")
    return second


def test_a_push_beaten_by_another_attempt_of_the_task_runs_again_from_the_remote(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two attempts on two workers (the older one's heartbeats were late): the one that pushes second is told
    to go again from the remote's branch (a retryable OSError), not BLOCKED for a person."""
    from specd.executors.temporal import clones

    second = _beaten(repo, tmp_path, monkeypatch, "docs(a): plan complete")
    with pytest.raises(clones.Overtaken, match="another attempt of this task pushed specd/a first"):
        clones.push(second)
    again = clones.prepare(tmp_path / "w1", str(tmp_path / "remote.git"), "k", "a", [])  # the retry
    assert (again.path / "one.txt").exists()
    assert not (again.path / "two.txt").exists()


def test_a_push_beaten_by_a_persons_commit_still_waits_for_that_person(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.executors.temporal import clones

    second = _beaten(repo, tmp_path, monkeypatch, "fix the parser by hand")
    with pytest.raises(clones.Refused, match="was rejected: the branch moved there"):
        clones.push(second)


def _fetched(clone: Any) -> bool:
    """Whether a fetch ran since the last call (git writes FETCH_HEAD at every fetch)."""
    head = clone.path / ".git" / "FETCH_HEAD"
    ran = head.exists()
    head.unlink(missing_ok=True)
    return ran


def test_a_clone_that_is_the_remotes_branch_is_reused_without_a_fetch(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33, item 3: the next step on the worker that pushed the last one needs no fetch and no checkout;
    a task that moved (another worker pushed), a step commit never pushed, or a file left behind each take the
    long way, so no guarantee of the contract rests on the shortcut."""
    from specd.executors.temporal import clones

    first, second = _two_clones(repo, tmp_path, monkeypatch)
    remote = str(tmp_path / "remote.git")
    _commit(first, "one.txt", "docs(a): discuss complete")
    clones.push(first)
    _fetched(first)
    again = clones.prepare(tmp_path / "w0", remote, "k", "a", [])  # the same worker, the next step
    assert not _fetched(again)
    assert (again.path / "one.txt").exists()

    moved = clones.prepare(tmp_path / "w1", remote, "k", "a", [])  # the task changed worker
    assert _fetched(moved)
    assert (moved.path / "one.txt").exists()
    _commit(moved, "two.txt", "docs(a): research complete")
    clones.push(moved)
    back = clones.prepare(tmp_path / "w0", remote, "k", "a", [])  # and back: w0's clone is behind now
    assert _fetched(back)
    assert (back.path / "two.txt").exists()

    _commit(back, "three.txt", "docs(a): plan complete")  # a step commit this attempt never pushed
    retried = clones.prepare(tmp_path / "w0", remote, "k", "a", [])
    assert _fetched(retried)
    assert not (retried.path / "three.txt").exists()

    (retried.path / "left.txt").write_text("an interrupted step's file\n")
    cleaned = clones.prepare(tmp_path / "w0", remote, "k", "a", [])
    assert _fetched(cleaned)
    assert not (cleaned.path / "left.txt").exists()
    assert not _fetched(clones.prepare(tmp_path / "w0", remote, "k", "a", []))

    calls: list[str] = []  # a step on the worker that pushed the last one: what git runs around it

    def counted(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
        calls.append(args[0])
        return git(where, *args)

    monkeypatch.setattr(clones, "git", counted)
    step = clones.prepare(tmp_path / "w0", remote, "k", "a", [])
    _commit(step, "four.txt", "docs(a): execute complete")
    head = clones.push(step)
    assert calls == ["ls-remote", "status", "rev-parse", "merge-base", "push"]
    assert repo.git("ls-remote", remote, "specd/a").split()[0] == repo.git("rev-parse", "HEAD", cwd=step.path).strip()
    assert head == repo.git("rev-parse", "HEAD", cwd=step.path).strip()  # what the push left on the remote
    calls.clear()  # the step after it, told that head by the workflow: the remote is not asked
    after = clones.prepare(tmp_path / "w0", remote, "k", "a", [], head=head)
    assert after.kept
    assert calls == ["status"]
