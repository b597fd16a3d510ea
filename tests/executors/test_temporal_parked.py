"""A step's run waits on its worker for the task's next step (executors/temporal/parked.py), through the real
activity (temporalio's ActivityEnvironment, no server): a real remote, real clones, real `specd continue` runs.

The next step's activity takes the waiting run over only when nothing could have changed under it; otherwise
the run is ended before anything touches the clone, and the step starts a fresh run from the files."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from executor_harness import Repo

pytest.importorskip("temporalio")

from test_temporal_attempts import KEY, _commit, _environment, _setup  # noqa: E402

from specd.executors.temporal import attempt, clones  # noqa: E402
from specd.executors.temporal.activities import Activities  # noqa: E402


def _step(acts: Activities, job: dict[str, Any]) -> Any:
    """One step's activity, as the dynamic activity named after the step runs it."""
    return _environment([]).run(functools.partial(acts._run, one=True), job)


def _parked_pid(acts: Activities) -> int | None:
    runs = list(acts.parking.runs.values())
    assert len(runs) <= 1
    return runs[0].proc.pid if runs else None


def _pushed_state(repo: Repo, tmp_path: Path) -> dict[str, Any]:
    shown = subprocess.run(["git", "--git-dir", str(tmp_path / "remote.git"), "show",
                            "specd/a:.specd/tasks/a/.pipeline-state.json"], capture_output=True, text=True, check=True)
    state: dict[str, Any] = json.loads(shown.stdout)
    return state


def test_each_next_step_on_this_worker_goes_on_in_the_run_that_waits(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    acts, job, clone = _setup(repo, tmp_path, monkeypatch)

    async def steps() -> list[tuple[dict[str, Any], int | None]]:
        seen = []
        for _ in range(3):
            result = await _step(acts, job)
            seen.append((result, _parked_pid(acts)))
        return seen

    (first, one), (second, two), (third, three) = asyncio.run(steps())
    assert (first["status"], first["next"], second["status"], second["next"]) == (
        "IN_PROGRESS", "s2", "IN_PROGRESS", "s3")
    assert one is not None
    assert two == one  # the same process ran s2: it was handed the step, not started again
    assert (third["status"], three) == ("COMPLETE", None)  # the last step: nothing waits for a next one
    assert _pushed_state(repo, tmp_path)["status"] == "COMPLETE"
    ledger = (clone / "ledger-a.txt").read_text().splitlines()
    assert [line.split()[1] for line in ledger] == ["s1", "s2", "s3"]


def test_a_run_waiting_in_a_clone_the_remote_moved_from_ends_before_the_fetch_and_the_step_starts_afresh(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    acts, job, clone = _setup(repo, tmp_path, monkeypatch)
    remote = str(tmp_path / "remote.git")

    async def steps() -> tuple[int | None, int | None, dict[str, Any]]:
        await _step(acts, job)
        waiting = _parked_pid(acts)
        assert waiting is not None
        elsewhere = clones.prepare(tmp_path / "w9", remote, "k", "a", [])  # another worker, the same task's branch
        _commit(elsewhere, "theirs.txt", "docs(a): by another worker")
        clones.push(elsewhere)
        result = await _step(acts, job)
        return waiting, _parked_pid(acts), result

    waiting, after, result = asyncio.run(steps())
    assert result["status"] == "IN_PROGRESS"
    assert after not in (None, waiting)  # s2 ran in a fresh run, which waits now
    assert (clone / "theirs.txt").exists()  # fetched and checked out: the run that waited was not there for it
    ledger = (clone / "ledger-a.txt").read_text().splitlines()
    assert [line.split()[1] for line in ledger] == ["s1", "s2"]


def test_the_clone_says_whether_it_was_kept_and_warns_before_it_changes(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(repo, tmp_path, monkeypatch)
    remote, calls = str(tmp_path / "remote.git"), []
    assert not clones.prepare(tmp_path / "w0", remote, "k", "a", [], lambda: calls.append("new")).kept
    kept = clones.prepare(tmp_path / "w0", remote, "k", "a", [], lambda: calls.append("kept"))
    assert kept.kept
    (kept.path / "left.txt").write_text("a file nobody committed\n")
    left = clones.prepare(tmp_path / "w0", remote, "k", "a", [], lambda: calls.append("left"))
    assert not left.kept
    assert not (left.path / "left.txt").exists()
    assert calls == ["new", "left"]  # each before the clone, or the fetch and checkout; never for a kept one


def test_the_worker_stopping_ends_a_waiting_run(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    acts, job, clone = _setup(repo, tmp_path, monkeypatch)

    async def step_then_stop() -> attempt.Proc:
        await _step(acts, job)
        waiting = next(iter(acts.parking.runs.values())).proc
        acts.stop_all()
        await asyncio.to_thread(waiting.wait, 60)
        return waiting

    waiting = asyncio.run(step_then_stop())
    assert waiting.returncode == 0  # it ended as a paused run ends, not killed
    assert not acts.parking.runs
    assert subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone, capture_output=True,
                          text=True, check=True).stdout == ""  # and wrote nothing on its way out


def _sleeper() -> Any:
    from specd.executors.temporal.parked import Parked

    loop = asyncio.get_running_loop()
    proc = subprocess.Popen(["sleep", "60"])
    return Parked(proc, attempt.Feed(loop, asyncio.Queue()), tempfile.TemporaryFile(), None)


def test_a_worker_keeps_few_runs_waiting_and_none_for_long(monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.executors.temporal import parked

    monkeypatch.setattr(parked, "IDLE", 0.3)

    async def fill() -> tuple[list[Any], list[str]]:
        waiting = parked.Parking()
        runs = [_sleeper() for _ in range(parked.MOST + 1)]
        for number, run in enumerate(runs):
            waiting.park(f"k/t{number}", run)
        kept = list(waiting.runs)
        await asyncio.to_thread(runs[0].proc.wait, 30)  # the one waiting longest made room for the newest
        await asyncio.sleep(0.5)  # and the rest, taken over by nobody, end after IDLE
        for run in runs:
            await asyncio.to_thread(run.proc.wait, 30)
        assert not waiting.runs
        return runs, kept

    runs, kept = asyncio.run(fill())
    assert kept == [f"k/t{n}" for n in range(1, parked.MOST + 1)]
    assert all(run.proc.returncode is not None and run.ended for run in runs)


def test_a_run_that_cannot_start_says_what_is_wrong_not_only_the_fix(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker whose agent cannot run here (the anthropic backend with no key): the step's result names the
    cause and its fix, as `specd continue` printed them, where it gave the fix line alone."""
    from specd.executors.temporal.settings import Behaviour
    from specd.executors.temporal.steps import refused

    acts, job, _ = _setup(repo, tmp_path, monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    acts.own = Behaviour(agent="anthropic", mode="auto")
    stopped = asyncio.run(_step(acts, job))
    assert stopped["status"] in ("BLOCKED", "FAILED"), stopped
    assert "needs ANTHROPIC_API_KEY" in stopped["reason"], stopped
    assert "fix: " in stopped["reason"], stopped
    assert refused("t", "", 1) == {"task": "t", "status": "BLOCKED", "reason": "specd continue exited with 1"}
    assert refused("t", "a traceback\nValueError: x\n", 2)["reason"] == "ValueError: x"


def test_a_run_still_ending_after_nobody_took_it_over_is_gone_before_the_next_step_starts_here(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parked run ends from a thread of its own (no one took it over in IDLE seconds, or it made room). The
    next step of its task on this worker must not start its run while that one still holds the task's lock:
    under load its end came late, and the new run was refused ("already being run by pid ...") and FAILED."""
    from specd.executors.temporal import parked

    acts, job, clone = _setup(repo, tmp_path, monkeypatch)
    slow, ending = parked.Parked.end, []

    def late_end(self: parked.Parked) -> None:  # the thread that ends it has not been scheduled yet
        ending.append(self.proc.pid)

    async def steps() -> tuple[int | None, dict[str, Any]]:
        await _step(acts, job)
        waiting = _parked_pid(acts)
        monkeypatch.setattr(parked.Parked, "end", late_end)
        acts.parking.drop(f"{job['key']}/a")  # as the IDLE timer does
        await asyncio.sleep(0.2)
        monkeypatch.setattr(parked.Parked, "end", slow)
        return waiting, await _step(acts, job)

    waiting, result = asyncio.run(steps())
    assert ending == [waiting]
    assert result["status"] == "IN_PROGRESS", result
    assert result["next"] == "s3", result
    ledger = (clone / "ledger-a.txt").read_text().splitlines()
    assert [line.split()[1] for line in ledger] == ["s1", "s2"]


def test_the_step_after_a_step_checks_its_clone_against_the_head_the_last_one_pushed_without_asking_the_remote(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step's result names the commit its push left on the remote's branch; the workflow hands it to the step
    right after, whose clone is then checked with a `git status` alone (no `ls-remote`: a round trip to the remote
    each step). Should the branch have moved meanwhile, that step's push is refused and its next attempt starts
    from the remote's branch."""
    from temporalio.exceptions import ApplicationError

    acts, job, clone = _setup(repo, tmp_path, monkeypatch)
    remote, called = str(tmp_path / "remote.git"), []
    real = clones.git

    def seen(where: Path, *args: str) -> Any:
        called.append(args[0])
        return real(where, *args)

    monkeypatch.setattr(clones, "git", seen)

    def remote_head() -> str:
        return subprocess.run(["git", "--git-dir", remote, "rev-parse", "specd/a"], capture_output=True, text=True,
                              check=True).stdout.strip()

    async def steps() -> tuple[dict[str, Any], list[str], dict[str, Any], BaseException | None, dict[str, Any]]:
        first = await _step(acts, job)
        called.clear()
        second = await _step(acts, {**job, "head": first["head"]})
        asked = list(called)
        assert second["head"] == remote_head()  # the result names what the remote holds after its push
        elsewhere = clones.prepare(tmp_path / "w9", remote, "k", "a", [])  # another worker moves the branch
        _commit(elsewhere, "theirs.txt", "docs(a): by another worker")
        clones.push(elsewhere)
        stale: BaseException | None = None
        try:
            await _step(acts, {**job, "head": second["head"]})
        except ApplicationError as exc:
            stale = exc
        again = await _step(acts, {**job, "head": second["head"]})  # Temporal's retry: the same job
        return first, asked, second, stale, again

    first, asked, second, stale, again = asyncio.run(steps())
    assert first["head"] != second["head"]
    assert "ls-remote" not in asked, asked
    assert "status" in asked
    assert stale is not None, "a step on a clone the remote had moved from pushed"
    assert "pushed" in str(stale), stale
    assert again["status"] in ("IN_PROGRESS", "COMPLETE"), again
    assert again["head"] == remote_head()
    assert (clone / "theirs.txt").exists()  # the retry started from the remote's branch
    ledger = (clone / "ledger-a.txt").read_text().splitlines()
    assert [line.split()[1] for line in ledger] == ["s1", "s2", "s3"]


def test_a_retry_asks_the_remote_so_a_step_pushed_by_the_attempt_before_never_runs_again(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job's ``head`` is where the step before it left the branch. An attempt after the first cannot trust it:
    the attempt before may have pushed its step and died before Temporal heard. CI saw it: worker A ran s1 (its
    clone at s1's commit), worker B ran s2 and pushed it, and s2's retry, landing on A, found A's clone at the
    job's head, took it for current and ran s2 a second time."""
    import dataclasses

    acts, job, clone = _setup(repo, tmp_path, monkeypatch)
    other = Activities(tmp_path / "w2", str(tmp_path / "remote.git"), acts.own, print)

    def retry(which: Activities, given: dict[str, Any]) -> Any:
        env = _environment([])
        env.info = dataclasses.replace(env.info, attempt=2, workflow_id="")  # no workflow to ask about a cancel
        return env.run(functools.partial(which._run, one=True), given)

    async def steps() -> tuple[dict[str, Any], dict[str, Any]]:
        first = await _step(acts, job)  # worker A: s1, its clone at s1's commit
        await _step(other, {**job, "head": first["head"]})  # worker B: s2, pushed
        return first, await retry(acts, {**job, "head": first["head"]})  # s2's retry, on A

    _, again = asyncio.run(steps())
    assert again["status"] in ("IN_PROGRESS", "COMPLETE"), again
    ledgers = [(where / "ledger-a.txt").read_text().splitlines() for where in (clone, tmp_path / "w2" / KEY / "a")]
    runs = sorted({line for ledger in ledgers for line in ledger})
    assert [line.split()[1] for line in runs].count("s2") == 1, runs  # s2 ran once, on B
    assert [line.split()[1] for line in runs].count("s3") == 1, runs  # the retry ran the step after it
