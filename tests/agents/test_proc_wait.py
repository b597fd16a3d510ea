"""Waiting on an agent blocks on its exit (a pidfd), never a sleep-and-look loop; the timeout still holds."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from specd.agents import proc as procs


def _start(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_the_wait_for_an_agent_sleeps_in_the_kernel_not_in_a_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    naps: list[float] = []
    real = time.sleep
    monkeypatch.setattr(subprocess.time, "sleep", lambda s: (naps.append(s), real(s)))  # Popen.wait's polling
    child = _start(0.3)
    assert procs.wait_exit(child, 60) is True
    assert child.returncode == 0
    assert naps == []  # no poll: the pidfd woke us when the child exited


def test_a_timeout_still_ends_the_wait_and_the_child_is_left_to_stop() -> None:
    child = _start(60)
    try:
        assert procs.wait_exit(child, 0.2) is False
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_a_child_reaped_already_is_waited_on_without_error() -> None:
    child = _start(0)
    child.wait()
    assert procs.wait_exit(child, 5) is True
