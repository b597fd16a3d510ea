"""What `specd status` shows of a task on Temporal: the pushed copy, corrected by its workflow's word."""

from __future__ import annotations

from typing import Any

from specd.engine.waiting import answers_text
from specd.executors.temporal.shown import as_workflow_says


def pushed(status: str, **extra: Any) -> dict[str, Any]:
    return {"task": "t", "status": status, "idle": "stopped" if status == "IN_PROGRESS" else None,
            "hint": "specd continue t", "reason": "", "running": None,
            "status_note": "no specd process is running it (interrupted or killed); `specd continue t` resumes",
            **extra}


def workflow(status: str, running: bool = True, reason: str = "", step: str = "") -> dict[str, Any]:
    return {"running": running, "status": status, "reason": reason, "step": step, "wait": None}


def test_a_step_running_on_a_worker_is_in_progress_never_stopped_and_continue_is_not_offered() -> None:
    shown = as_workflow_says("t", pushed("IN_PROGRESS"), workflow("IN_PROGRESS", step="s2"))
    assert (shown["status"], shown["idle"], shown["hint"]) == ("IN_PROGRESS", None, None)
    assert "runs on Temporal (s2)" in shown["status_note"]
    assert "continue" not in shown["status_note"]


def test_a_workflow_that_ended_otherwise_than_its_last_push_shows_how_it_ended_and_why() -> None:
    refused = "the worker refused this job: field agent: ..."
    shown = as_workflow_says("t", pushed("IN_PROGRESS"), workflow("BLOCKED", running=False, reason=refused))
    assert (shown["status"], shown["reason"], shown["idle"], shown["hint"], shown["status_note"]) == (
        "BLOCKED", refused, None, None, None)
    ended = as_workflow_says("t", pushed("WAITING_FOR_HUMAN"), workflow("FAILED", running=False))
    assert (ended["status"], ended["reason"]) == ("FAILED", "its workflow ended FAILED")
    same = pushed("COMPLETE")
    assert as_workflow_says("t", same, workflow("COMPLETE", running=False)) == same


def test_a_waiting_task_is_answered_by_signals_and_an_answered_one_shows_taken_up() -> None:
    reason = "stopped at the gate before 's2'; answer with " + answers_text("t")
    waiting = as_workflow_says("t", pushed("WAITING_FOR_HUMAN", reason=reason), workflow("WAITING_FOR_HUMAN"))
    assert waiting["hint"] == "specd approve t"
    assert waiting["reason"] == "stopped at the gate before 's2'; answer with " + answers_text("t", go_on=False)
    assert "continue" not in waiting["reason"]
    gate = {"kind": "gate", "step": "s2"}
    taken = as_workflow_says("t", pushed("WAITING_FOR_HUMAN", reason=reason, waiting=gate), workflow("IN_PROGRESS"))
    assert (taken["status"], taken["reason"], taken["hint"], taken["waiting"]) == ("IN_PROGRESS", None, None, None)
