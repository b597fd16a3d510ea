"""`specd run --keep-waiting`: a task held at a gate stays in the run and goes on once answered."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import Any

from executor_harness import Repo

DEADLINE = 120.0  # a safety net; the loops below end as soon as the awaited thing happens


def _start(repo: Repo, *tasks: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "specd", "run", *tasks, "--keep-waiting", "--semi-auto",
                             "--agent", repo.agent()], cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _status(repo: Repo, task: str) -> dict[str, Any]:
    done = repo.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _wait_for(repo: Repo, task: str, status: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while _status(repo, task)["status"] != status:
        assert proc.poll() is None, f"specd run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{task} never reached {status}"
        time.sleep(0.2)


def test_an_answered_gate_makes_the_waiting_run_go_on(tmp_path: Any) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("a")
    repo.new("b", "a")  # needs a: it must wait for a's answer, not be given up on
    proc = _start(repo, "b")
    try:
        _wait_for(repo, "a", "WAITING_FOR_HUMAN", proc)
        time.sleep(1.0)  # several of the executor's looks at the state: it must still be there
        assert proc.poll() is None, "the run ended although a task waits and --keep-waiting was given"
        answer = repo.specd("approve", "a", "--note", "looks right")
        assert answer.returncode == 0, answer.stderr
        _wait_for(repo, "b", "WAITING_FOR_HUMAN", proc)  # b started from a's finished work, and has a gate too
        assert repo.specd("approve", "b").returncode == 0
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    a = _status(repo, "a")
    assert a["status"] == "COMPLETE"
    assert a["checkpoints"][-1]["answer"] == "approve"
    assert a["checkpoints"][-1]["note"] == "looks right"
    assert _status(repo, "b")["status"] == "COMPLETE"
    assert [step for task, step, _, _ in repo.ledger() if task == "a"] == ["s1", "s2"]  # s1 never ran twice


def test_the_run_ends_when_the_last_waiting_task_is_answered_and_on_ctrl_c(tmp_path: Any) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("a")
    repo.new("c")
    proc = _start(repo, "a", "c")
    try:
        _wait_for(repo, "a", "WAITING_FOR_HUMAN", proc)
        _wait_for(repo, "c", "WAITING_FOR_HUMAN", proc)
        assert repo.specd("approve", "a").returncode == 0
        _wait_for(repo, "a", "COMPLETE", proc)
        assert proc.poll() is None, "the run ended while c still waits"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert _status(repo, "c")["status"] == "WAITING_FOR_HUMAN"  # untouched: answering it later still works
