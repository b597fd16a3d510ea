"""A waiting gate or escalation is held until answered: approve, reject, skip, continue --approve."""

from __future__ import annotations

from brain_harness import Harness
from test_modes_gates import ROADMAP, builtin_shaped

BEFORE_GATE = ["step discuss", "step research", "step plan", "step plan 01"]


def waiting_at_execute(h: Harness) -> None:
    builtin_shaped(h)
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text(ROADMAP, encoding="utf-8")
    h.cues(**{"step:review": {"outcomes": ["approve"]}})
    first = h.cont("t", "--semi-auto")
    assert first.returncode == 3, first.stderr
    assert h.log() == BEFORE_GATE


def test_continue_auto_holds_a_waiting_gate_names_approve_and_runs_nothing(h: Harness) -> None:
    waiting_at_execute(h)
    checkpoints = h.status("t")["checkpoints"]

    held = h.cont("t", "--auto")

    assert held.returncode == 3, held.stderr
    assert "specd approve t" in held.stderr
    assert "the gate before 'execute'" in held.stderr
    assert h.log() == BEFORE_GATE
    status = h.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["checkpoints"] == checkpoints  # holding records nothing, answers nothing


def test_approve_then_continue_runs_execute_with_the_approval_and_note_recorded(h: Harness) -> None:
    waiting_at_execute(h)

    approved = h.specd("approve", "t", "--note", "ship the small version")

    assert approved.returncode == 0, approved.stderr
    assert h.log() == BEFORE_GATE  # approving runs nothing
    assert h.status("t")["checkpoints"][-1]["answer"] == "approve"

    result = h.specd("continue", "t")  # no flags: the saved agent and mode are reused

    assert result.returncode == 0, result.stderr
    assert h.log() == [*BEFORE_GATE, "step execute 01", "step review 01"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    answer = next(c for c in status["checkpoints"] if c["answer"] == "approve")
    assert (answer["step"], answer["phase"], answer["note"]) == ("execute", "01", "ship the small version")
    assert answer["at"]
    execute = next(c for c in h.calls() if c["line"] == "step execute 01")
    assert "ship the small version" in execute["prompt"]


def test_reject_reruns_the_previous_step_with_the_note_in_its_prompt(h: Harness) -> None:
    waiting_at_execute(h)

    rejected = h.specd("reject", "t", "--note", "split it")

    assert rejected.returncode == 0, rejected.stderr
    result = h.specd("continue", "t")  # semi-auto remembered: the re-planned step runs, then execute's gate

    assert result.returncode == 3, result.stderr
    assert h.log() == [*BEFORE_GATE, "step plan 01"]
    assert "split it" in h.calls()[-1]["prompt"]
    assert "split it" not in h.calls()[-2]["prompt"]
    checkpoint = h.status("t")["checkpoints"]
    assert any(c["answer"] == "reject" and c["note"] == "split it" for c in checkpoint)


def test_reject_without_a_note_is_refused(h: Harness) -> None:
    waiting_at_execute(h)

    result = h.specd("reject", "t", "--note", " ")

    assert result.returncode == 2
    assert "reject needs a note" in result.stderr
    assert h.status("t")["waiting"]["step"] == "execute"


def test_continue_approve_answers_and_goes_on_in_one_command(h: Harness) -> None:
    waiting_at_execute(h)

    result = h.specd("continue", "t", "--approve", "--note", "go")

    assert result.returncode == 0, result.stderr
    assert h.log() == [*BEFORE_GATE, "step execute 01", "step review 01"]


def test_skip_at_the_review_gate_ends_the_phase_instead_of_revising(h: Harness) -> None:
    builtin_shaped(h)
    h.pipeline({
        "main": [{"name": "phases", "pipeline": "ph", "foreach": "phases"}],
        "ph": [{"name": "execute", "workflow": "execute.md"},
               {"name": "review", "workflow": "review.md", "pause_in_semi_auto": True,
                "outcomes": {"done": "end", "revise": "revise"}},
               {"name": "revise", "workflow": "revise.md", "outcomes": {"done": "execute"}}],
    })
    for name in ("execute.md", "review.md", "revise.md"):
        h.workflow(name, outcomes=("done", "revise"))
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text(ROADMAP, encoding="utf-8")
    first = h.cont("t", "--semi-auto")
    assert first.returncode == 3, first.stderr

    skipped = h.specd("skip", "t")
    result = h.specd("continue", "t")

    assert skipped.returncode == 0, skipped.stderr
    assert result.returncode == 0, result.stderr
    assert h.log() == ["step execute 01"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [(e["step"], e["outcome"]) for e in status["history"]] == [("execute", "done"), ("review", "skipped")]


def test_approve_on_a_task_that_waits_for_nothing_is_bad_input(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}]})
    h.new("t")
    assert h.cont("t").returncode == 0

    result = h.specd("approve", "t")

    assert result.returncode == 2
    assert "is not waiting" in result.stderr
    assert "Traceback" not in result.stderr
