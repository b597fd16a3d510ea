"""A run that waits between steps for its worker (SPECD_PARK with SPECD_STEPS=1), driven by hand: a real
`specd continue --json` in a real git repository, signalled as a Temporal worker signals it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from executor_harness import Repo

PARKED = {"SPECD_STEPS": "1", "SPECD_PARK": f"60:{os.getpid()}"}  # this process hands it its steps


class Run:
    """`specd continue t --json` with the given environment, its events read one at a time."""

    def __init__(self, repo: Repo, env: dict[str, str], agent: str = "") -> None:
        self.repo = repo
        self.proc = subprocess.Popen([sys.executable, "-m", "specd", "continue", "t", "--json", "--auto", "--agent",
                                      agent or repo.agent()], cwd=repo.root, env={**repo.env, **env},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.seen: list[dict[str, Any]] = []

    def until(self, kind: str) -> dict[str, Any]:
        out: IO[str] | None = self.proc.stdout
        assert out is not None
        for line in out:
            event = json.loads(line) if line.startswith("{") else {}
            self.seen.append(event)
            if event.get("kind") == kind:
                return event
        raise AssertionError(f"no {kind} before the output ended: {self.seen}")

    def signal(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def end(self) -> int:
        code = self.proc.wait(timeout=60)
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()
        return code


def untouched(repo: Repo) -> tuple[str, str]:
    """What a parked run must leave as it is: the tree's status (every untracked file too) and the last commit."""
    return (repo.git("status", "--porcelain", "--untracked-files=all"), repo.git("rev-parse", "HEAD"))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path)
    made.new("t")
    made.git("add", "-A")
    made.git("commit", "-q", "-m", "task t")
    return made


def test_a_parked_run_is_handed_each_next_step_and_runs_them_as_one_run(repo: Repo) -> None:
    run = Run(repo, PARKED)
    for done, nxt in (("s1", "s2"), ("s2", "s3")):
        finished = run.until("run_finished")
        assert (finished["status"], finished["parked"], finished["next"]["step"]) == ("IN_PROGRESS", True, nxt)
        run.until("run_parked")
        # everything of the step is committed and saved before it says it waits: the worker pushes HEAD now
        assert untouched(repo)[0] == ""
        assert repo.git("log", "-1", "--format=%s").strip() == f"docs(t): {done} complete"
        committed = json.loads(repo.git("show", "HEAD:.specd/tasks/t/.pipeline-state.json"))
        assert (committed["status"], committed["cursor"][0]["step"]) == ("IN_PROGRESS", nxt)
        assert run.proc.poll() is None
        run.signal(signal.SIGUSR1)
        run.until("run_resumed")
        assert run.until("step_started")["step"] == nxt
    assert run.until("run_finished")["status"] == "COMPLETE"  # the last step: the run ends, waiting for nothing
    assert run.end() == 0, run.stderr
    assert [e["kind"] for e in run.seen].count("run_started") == 1  # one run: started once, its steps handed on
    ledger = (repo.root / "ledger-t.txt").read_text().splitlines()
    assert [line.split()[1] for line in ledger] == ["s1", "s2", "s3"]
    assert untouched(repo)[0] == ""
    state = json.loads((repo.root / ".specd/tasks/t/.pipeline-state.json").read_text())
    assert state["status"] == "COMPLETE"


@pytest.mark.parametrize("how", ["sigterm", "sigint", "timeout"])
def test_a_parked_run_told_to_stop_or_left_alone_ends_writing_nothing(repo: Repo, how: str) -> None:
    run = Run(repo, {**PARKED, "SPECD_PARK": f"{0.5 if how == 'timeout' else 60}:{os.getpid()}"})
    run.until("run_parked")
    before = untouched(repo), (repo.root / ".specd/tasks/t/.pipeline-state.json").read_bytes()
    if how != "timeout":
        run.signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
    assert run.end() == 0, run.stderr
    assert (untouched(repo), (repo.root / ".specd/tasks/t/.pipeline-state.json").read_bytes()) == before
    assert "ABORTED" not in json.dumps(run.seen)
    # the next run (fresh, as when the next step went to another worker) goes on from the files
    assert repo.specd("continue", "t", "--auto", "--agent", repo.agent()).returncode == 0
    assert [line.split()[1] for line in (repo.root / "ledger-t.txt").read_text().splitlines()] == ["s1", "s2", "s3"]


def test_a_sigusr1_from_anyone_but_its_worker_hands_nothing_and_kills_nothing(repo: Repo) -> None:
    """Only the worker named in SPECD_PARK hands a step on: another process's SIGUSR1 (an agent outside the jail,
    say), while a step runs or while the run waits, is ignored, and is never the signal's default (the end)."""
    worker = subprocess.Popen(["sleep", "60"])  # stands for the worker: a live pid that is not this process
    try:
        run = Run(repo, {**PARKED, "SPECD_PARK": f"60:{worker.pid}"})
        run.until("step_started")
        run.signal(signal.SIGUSR1)  # while the step's agent runs
        run.until("run_finished")
        run.signal(signal.SIGUSR1)  # as it commits and reports
        run.until("run_parked")
        run.signal(signal.SIGUSR1)  # as it waits
        assert run.proc.poll() is None
        run.signal(signal.SIGTERM)
        assert run.end() == 0, run.stderr
    finally:
        worker.kill()
        worker.wait()
    assert [e.get("kind") for e in run.seen].count("step_started") == 1  # s2 never ran
    assert "run_resumed" not in [e.get("kind") for e in run.seen]


def test_specd_park_alone_changes_nothing_and_reaches_no_agent(repo: Repo) -> None:
    run = Run(repo, {"SPECD_PARK": "60"}, "cmd:env > agent-env-$SPECD_STEP.txt")  # no SPECD_STEPS: no waiting
    assert run.until("run_finished")["status"] == "COMPLETE"
    assert run.end() == 0, run.stderr
    assert "run_parked" not in [e.get("kind") for e in run.seen]
    for step in ("s1", "s2", "s3"):
        assert "SPECD_STEP=" + step in (seen := (repo.root / f"agent-env-{step}.txt").read_text())
        assert "SPECD_PARK" not in seen


def test_the_steps_of_a_parked_run_see_no_specd_park_either(repo: Repo) -> None:
    run = Run(repo, PARKED, "cmd:env > agent-env-$SPECD_STEP.txt")
    run.until("run_parked")
    run.signal(signal.SIGUSR1)
    run.until("run_parked")
    run.signal(signal.SIGTERM)
    assert run.end() == 0, run.stderr
    for step in ("s1", "s2"):
        seen = (repo.root / f"agent-env-{step}.txt").read_text()
        assert "SPECD_PARK" not in seen
        assert "SPECD_STEPS" not in seen


def test_specd_park_without_steps_is_taken_away_and_leaves_sigusr1_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.engine import parking

    monkeypatch.setenv("SPECD_PARK", f"60:{os.getpid()}")
    before = signal.getsignal(signal.SIGUSR1)
    try:
        assert parking.from_env(False) is None  # a run with no SPECD_STEPS never waits
        assert "SPECD_PARK" not in os.environ
        assert signal.getsignal(signal.SIGUSR1) is before
        monkeypatch.setenv("SPECD_PARK", f"60:{os.getpid()}")
        parked = parking.from_env(True)
        assert parked is not None
        assert (parked.limit, parked.by) == (60.0, os.getpid())
        assert signal.getsignal(signal.SIGUSR1) is not before  # a waiting run is never ended by a stray SIGUSR1
    finally:
        signal.signal(signal.SIGUSR1, before)
