"""Crashes, interrupts and concurrent runs against real `specd continue` processes."""

from __future__ import annotations

import os
import signal

from brain_harness import Harness, held_alive, kill_group, wait_until

from specd.state.store import StateStore


def three_steps(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": n, "workflow": "work.md"} for n in ("a", "b", "c")]})
    h.new("t")


def test_sigkill_mid_step_leaves_parsable_state_and_resume_reruns_only_that_step(h: Harness) -> None:
    three_steps(h)
    h.cues(**{"step:b": {"hold": "never"}})
    proc = h.start("t")
    held = h.wait_held("b", proc)

    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=20)
    kill_group(held["pgid"])  # the agent has its own process group; SIGKILL of specd leaves it behind
    assert wait_until(lambda: not held_alive(held))

    state = StateStore(h.task_dir("t"), "t").load()
    assert state is not None
    assert state.current is not None
    assert state.current.step == "b"  # saved before dispatch
    assert [e["step"] for e in state.history] == ["a"]
    killed = h.status("t")
    assert killed["status"] == "IN_PROGRESS"
    assert killed["running"] is None  # the dead process holds no lock
    assert "interrupted or killed" in killed["status_note"]

    h.cues()
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    assert "already being run" not in resumed.stderr
    assert h.log() == ["step a", "step b", "step b", "step c"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [e["step"] for e in status["history"]] == ["a", "b", "c"]


def test_second_concurrent_continue_exits_2_naming_the_first_pid(h: Harness) -> None:
    three_steps(h)
    h.cues(**{"step:a": {"hold": "go"}})
    first = h.start("t")
    h.wait_held("a", first)

    second = h.cont("t")

    assert second.returncode == 2, second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert "already being run" in second.stderr
    assert h.log() == ["step a"]
    assert h.status("t")["running"]["pid"] == first.pid

    h.release("go")
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert h.log() == ["step a", "step b", "step c"]


def test_ctrl_c_stops_the_agent_group_records_aborted_and_resume_reruns_the_step(h: Harness) -> None:
    three_steps(h)
    h.cues(**{"step:b": {"hold": "never"}})
    proc = h.start("t")
    held = h.wait_held("b", proc)

    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)

    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert wait_until(lambda: not held_alive(held), deadline=10)
    status = h.status("t")
    assert status["status"] == "ABORTED"
    assert status["next"]["step"] == "b"

    h.cues()
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    assert h.log() == ["step a", "step b", "step b", "step c"]
    assert h.status("t")["status"] == "COMPLETE"


def test_a_broken_config_json_is_refused_before_the_run_says_or_writes_anything(h: Harness) -> None:
    """Found by hand: `continue` printed "resuming", journaled a run_started that no run_finished followed, and
    only then stopped on the task's unreadable config.json."""
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"},
                         {"name": "b", "workflow": "work.md", "pause_in_semi_auto": True}]})
    h.new("t")
    assert h.cont("t", "--semi-auto", input="").returncode == 3  # a ran; the gate before b waits
    journal = (h.task_dir("t") / "events.jsonl").read_bytes()
    state = (h.task_dir("t") / ".pipeline-state.json").read_bytes()
    (h.task_dir("t") / "config.json").write_text('{"stage": ', encoding="utf-8")

    refused = h.specd("continue", "t", "--approve", "--agent", h.agent_spec())

    assert refused.returncode == 2, refused.stderr
    assert ".specd/tasks/t/config.json: invalid JSON" in refused.stderr
    assert "resuming" not in refused.stderr + refused.stdout
    assert (h.task_dir("t") / "events.jsonl").read_bytes() == journal
    assert (h.task_dir("t") / ".pipeline-state.json").read_bytes() == state


def test_a_summary_holding_unicode_line_separators_leaves_the_task_whole(h: Harness) -> None:
    """Found by hand, as the model: one summary with U+2028 in it, and `status` called the task's history file
    broken ("counts 2 finished rows but this file holds 0"). JSON writes these characters as they are; the
    readers split lines at them. A model's answer must not be able to break the record of a run."""
    three_steps(h)
    said = "read the spec\u2028then the code\u2029and\x85the tests"
    h.cues(**{"step:a": {"summary": said}})
    h.env["SPECD_STEPS"] = "2"  # stop after b, so the resume reads the history back
    first = h.cont("t")
    assert first.returncode == 0, first.stderr
    h.env.pop("SPECD_STEPS")
    resumed = h.cont("t")
    assert resumed.returncode == 0, resumed.stderr
    assert h.log() == ["step a", "step b", "step c"]  # nothing finished ran again
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [(e["step"], e["summary"]) for e in status["history"]][0] == ("a", said)
    logs = h.specd("logs", "t")
    assert logs.returncode == 0, logs.stderr
    assert "no whole event" not in logs.stderr
