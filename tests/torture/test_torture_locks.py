"""Locks: a second `specd continue` on a running task refuses; a lock left by SIGKILL is reclaimed."""

from __future__ import annotations

import signal

from brain_harness import Harness, kill_group

from specd.state.store import StateStore


def setup(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    h.new("t")
    h.cues(**{"step:a": {"hold": "go"}})


def test_concurrent_continue_refuses_and_the_first_run_completes(h: Harness) -> None:
    setup(h)
    first = h.start("t")
    held = h.wait_held("a", first)
    for _ in range(3):
        second = h.cont("t")
        assert second.returncode == 2, second.stderr
        assert f"pid {first.pid}" in second.stderr
        assert "already being run" in second.stderr
    status = h.status("t")
    assert status["running"]["pid"] == first.pid
    h.release("go")
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert held["pid"] != first.pid
    state = StateStore(h.task_dir("t"), "t").load()
    assert state is not None
    assert [r["step"] for r in state.history] == ["a", "b"]  # each once: the refused runs did nothing
    assert h.log() == ["step a", "step b"]


def test_a_lock_left_by_sigkill_is_reclaimed(h: Harness) -> None:
    setup(h)
    first = h.start("t")
    held = h.wait_held("a", first)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=20)
    kill_group(held["pgid"])
    assert (h.task_dir("t") / ".run.lock.owner").exists()  # left behind by the killed run
    killed = h.status("t")
    assert killed["running"] is None
    assert killed["status"] == "IN_PROGRESS"
    h.cues()
    resumed = h.cont("t")
    assert resumed.returncode == 0, resumed.stderr
    state = StateStore(h.task_dir("t"), "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    assert [r["step"] for r in state.history] == ["a", "b"]
