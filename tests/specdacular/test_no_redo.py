"""Continuing a derived task never redoes finished work: earlier steps' files are left byte for byte."""

from __future__ import annotations

from spd_kit import Project, hashes, roadmap

from specd.state.store import StateStore

SPECD_OWNED = {"config.json"}  # specd keeps specdacular's stage/phase fields current there


def test_a_task_in_its_last_phase_runs_only_the_rest_of_that_phase(sp: Project) -> None:
    task = sp.task("t", {"stage": "execution", "phases": {"total": 3, "completed": 2, "current": 3,
                                                          "current_status": "executed"}},
                   research=True, roadmap_text=roadmap("t", [("1", "A", True), ("2", "B", True), ("3", "C", False)]),
                   plans={p: ["PLAN.md", "EXECUTED.md"] for p in ("01", "02", "03")})
    (task / "phases/phase-01/REVIEW.md").write_text("approved\n", encoding="utf-8")
    before = hashes(task)
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    assert sp.log() == ["phase-execution review 03"]
    after = hashes(task)
    changed = {name for name, digest in before.items() if after.get(name) != digest}
    assert changed <= SPECD_OWNED, changed
    assert "phases/phase-03/REVIEW.md" in after  # what the step that ran produces
    state = StateStore(task, "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    assert state.phases_completed == ["01", "02", "03"]
    assert [h["step"] for h in state.history if h["kind"] == "step"] == ["review"]
    assert any("derived" in note for note in state.notes)
    # From now on the run state leads: a second continue has nothing to do and runs nothing.
    again = sp.cont("t")
    assert again.returncode == 0, again.stderr
    assert sp.log() == ["phase-execution review 03"]


def test_a_researched_task_goes_on_with_planning_and_keeps_its_research(sp: Project) -> None:
    task = sp.task("t", {"stage": "research"}, gray=[True, True], research=True)
    before = hashes(task)
    result = sp.cont("t")
    assert result.returncode == 3, result.stderr  # the agent's fake roadmap lists no phases: a human must look
    assert sp.log() == ["main plan"]
    after = hashes(task)
    assert {name for name, digest in before.items() if after.get(name) != digest} <= SPECD_OWNED
    status = sp.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert [h["step"] for h in status["history"]] == ["plan"]


def test_the_notice_says_where_the_run_starts_and_why(sp: Project) -> None:
    sp.task("t", {"stage": "execution", "phases": {"total": 2, "current": 2, "current_status": "executing"}},
            roadmap_text=roadmap("t", [("1", "A", True), ("2", "B", False)]), plans={"02": ["PLAN.md"]})
    status = sp.status("t")
    assert status["status"] == "IN_PROGRESS"
    assert "execute (phase 02)" in status["status_note"]
    assert status["derived"] == {"step": "execute", "pipeline": "phase-execution", "phase": "02",
                                 "complete": False, "phases_done": ["01"], "why": "phase 02 is executing"}
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    assert "starting at execute (phase 02) because phase 02 is executing" in result.stdout + result.stderr
