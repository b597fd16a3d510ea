"""Gates per mode, answered from stdin: semi-auto pauses, interactive skip/back/jump/proceed."""

from __future__ import annotations

from typing import Any

from brain_harness import Harness

ROADMAP = "# Roadmap\n\n### Phase 1: Only\n\nThe one phase.\n"


def builtin_shaped(h: Harness) -> None:
    """The built-in pipeline's shape and workflows, with pause_in_semi_auto on execute only."""
    h.pipeline({
        "main": [
            {"name": "discuss", "workflow": "discuss.md"},
            {"name": "research", "workflow": "research.md"},
            {"name": "plan", "workflow": "plan.md"},
            {"name": "phases", "pipeline": "phase-execution", "foreach": "phases"},
        ],
        "phase-execution": [
            {"name": "plan", "workflow": "phase-plan.md"},
            {"name": "execute", "workflow": "execute.md", "pause_in_semi_auto": True,
             "outcomes": {"done": "review"}},
            {"name": "review", "workflow": "review.md",
             "outcomes": {"approve": "end", "done": "end", "revise": "revise", "escalate": "stop"}},
            {"name": "revise", "workflow": "revise.md", "outcomes": {"done": "execute"}},
        ],
    }, mode="interactive")


def test_semi_auto_at_eof_stops_before_the_paused_step_and_again_on_resume(h: Harness) -> None:
    builtin_shaped(h)
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text(ROADMAP, encoding="utf-8")
    before_gate = ["step discuss", "step research", "step plan", "step plan 01"]

    first = h.cont("t", "--semi-auto")  # stdin is /dev/null: EOF at the gate

    assert first.returncode == 3, first.stderr
    assert h.log() == before_gate
    status = h.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["waiting"] == {"kind": "gate", "step": "execute", "pipeline": "phase-execution", "phase": "01"}
    assert status["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "01"}

    second = h.cont("t", "--semi-auto")

    assert second.returncode == 3, second.stderr
    assert h.log() == before_gate
    assert h.status("t")["waiting"]["step"] == "execute"

    h.cues(**{"step:review": {"outcomes": ["approve"]}})
    third = h.cont("t", "--semi-auto", input="proceed\n")

    assert third.returncode == 0, third.stderr
    assert h.log() == [*before_gate, "step execute 01", "step review 01"]
    assert h.status("t")["status"] == "COMPLETE"


def steps(*names: str) -> dict[str, Any]:
    return {"main": [{"name": n, "workflow": "work.md"} for n in names]}


def test_interactive_honours_proceed_skip_back_and_jump_from_stdin(h: Harness) -> None:
    h.workflow("work.md", description="does the work")
    h.pipeline(steps("a", "b", "c", "d", "e"))
    h.new("t")
    answers = [
        "proceed",  # gate a → a runs
        "skip",     # gate b → b is skipped
        "back",     # gate c → back to b
        "proceed",  # gate b → b runs
        "jump e",   # gate c → straight to e (c and d never run)
        "proceed",  # gate e → e runs
    ]

    result = h.cont("t", "--interactive", input="\n".join(answers) + "\n")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b", "step e"]
    assert "does the work" in result.stderr  # the gate shows what the next step will do
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [(e["step"], e["outcome"]) for e in status["history"]] == [
        ("a", "done"), ("b", "skipped"), ("b", "done"), ("e", "done")]


def test_interactive_eof_at_the_first_gate_runs_nothing(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline(steps("a", "b"))
    h.new("t")

    result = h.cont("t", "--interactive")

    assert result.returncode == 3, result.stderr
    assert h.log() == []
    status = h.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["next"]["step"] == "a"
