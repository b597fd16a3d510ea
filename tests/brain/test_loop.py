"""The loop end to end: nested pipelines, outcome routing, max_visits, phases."""

from __future__ import annotations

from typing import Any

from brain_harness import Harness


def step(name: str, workflow: str = "work.md", **extra: Any) -> dict[str, Any]:
    return {"name": name, "workflow": workflow, **extra}


def nested(leaf: list[str]) -> dict[str, Any]:
    return {
        "main": [step("a"), {"name": "middle", "pipeline": "mid"}, step("e")],
        "mid": [step("b"), {"name": "inner", "pipeline": "leaf"}, step("d")],
        "leaf": [step(name) for name in leaf],
    }


def test_three_level_nested_pipeline_runs_in_order_and_reorders(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline(nested(["c1", "c2"]))
    h.new("first")

    result = h.cont("first")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b", "step c1", "step c2", "step d", "step e"]
    status = h.status("first")
    assert status["status"] == "COMPLETE"
    assert status["next"] is None
    assert [(e["step"], e["pipeline"]) for e in status["history"] if e["kind"] == "step"] == [
        ("a", "main"), ("b", "mid"), ("c1", "leaf"), ("c2", "leaf"), ("d", "mid"), ("e", "main")]

    again = h.cont("first")  # a complete task runs nothing again
    assert again.returncode == 0, again.stderr
    assert len(h.log()) == 6

    h.pipeline(nested(["c2", "c1"]))
    h.reset_log()
    h.new("second")

    result = h.cont("second")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b", "step c2", "step c1", "step d", "step e"]
    assert h.status("second")["status"] == "COMPLETE"


def review_loop(h: Harness, review_visits: int | None = None) -> None:
    h.workflow("execute.md")
    h.workflow("review.md", outcomes=("approve", "revise"))
    h.workflow("revise.md")
    review = step("review", "review.md", outcomes={"approve": "end", "revise": "revise"})
    if review_visits is not None:
        review["max_visits"] = review_visits
    h.pipeline({"main": [step("execute", "execute.md", outcomes={"done": "review"}), review,
                         step("revise", "revise.md", outcomes={"done": "execute"})]})


def test_review_revise_execute_loop_follows_outcomes(h: Harness) -> None:
    review_loop(h)
    h.cues(**{"step:review": {"outcomes": ["revise", "approve"]}})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step execute", "step review", "step revise", "step execute", "step review"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [e["outcome"] for e in status["history"] if e["step"] == "review"] == ["revise", "approve"]


def test_max_visits_exceeded_waits_for_a_human(h: Harness) -> None:
    review_loop(h, review_visits=2)
    h.cues(**{"step:review": {"outcomes": ["revise"]}})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 3, result.stderr
    assert h.log() == ["step execute", "step review", "step revise"] * 2 + ["step execute"]
    status = h.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["waiting"]["step"] == "review"
    assert "max_visits" in status["reason"]


ROADMAP = """# Roadmap

## Phases

### Phase 1: A

Build A.

### Phase 2: B

Build B.

### Phase 3: C

Build C.
"""


def test_phases_run_in_decimal_order_including_a_fix_phase_added_mid_run(h: Harness) -> None:
    phase_pipeline(h)
    h.cues(**{"step:execute:02": {"mkdir": "phases/phase-02.1"}})

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step plan", "step execute 01", "step execute 02", "step execute 02.1", "step execute 03"]
    calls = {c["line"]: c for c in h.calls()}
    # config.json is current while the run moves, in specdacular's terms: what each step saw when it started
    assert calls["step plan"]["config"]["stage"] == "planning"
    assert calls["step plan"]["config"]["phases"]["total"] == 3
    assert calls["step execute 02"]["config"]["stage"] == "execution"
    assert calls["step execute 02"]["config"]["phases"]["current"] == 2  # an integer, as specdacular writes it
    assert calls["step execute 02"]["config"]["phases"]["current_status"] == "executing"
    assert calls["step execute 02"]["config"]["phases"]["total"] == 3
    assert calls["step execute 02.1"]["config"]["phases"]["total"] == 3  # a fix phase is part of phase 2
    assert calls["step execute 02.1"]["config"]["phases"]["current"] == 2
    assert calls["step execute 03"]["config"]["phases"]["completed"] == 2  # 01 and 02 (02.1 is part of 02)
    assert calls["step execute 03"]["env"]["SPECD_PHASE"] == "03"
    config = h.config("t")
    assert config["phases"] == {**config["phases"], "total": 3, "completed": 3, "current": 3,
                                "current_status": "completed"}
    assert config["stage"] == "complete"
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert status["phases_completed"] == ["01", "02", "02.1", "03"]


def phase_pipeline(h: Harness) -> None:
    h.workflow("plan.md")
    h.workflow("execute.md")
    h.pipeline({
        "main": [step("plan", "plan.md"), {"name": "phases", "pipeline": "per-phase", "foreach": "phases"}],
        "per-phase": [step("execute", "execute.md")],
    })
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text(ROADMAP, encoding="utf-8")


def test_config_counts_every_phase_completed_when_the_run_completes(h: Harness) -> None:
    phase_pipeline(h)

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.status("t")["phases_completed"] == ["01", "02", "03"]
    phases = h.config("t")["phases"]
    assert phases["total"] == 3
    assert phases["completed"] == 3


def test_a_step_declared_stage_moves_the_task_stage(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [step("a", stage="research"), step("b"), step("c", stage="building")]})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    # "building" is no stage specdacular knows, so config.json keeps the last one it does
    assert [c["config"]["stage"] for c in h.calls()] == ["research", "research", "research"]
    assert h.config("t")["stage"] == "complete"


def test_a_workflow_frontmatter_stage_moves_the_task_stage(h: Harness) -> None:
    h.workflow("work.md", extra="stage: planning")
    h.pipeline({"main": [step("a")]})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.calls()[0]["config"]["stage"] == "planning"


def test_an_outcomes_map_adds_to_what_a_plain_workflow_allows(h: Harness) -> None:
    """`outcomes: {bad: fail}` on a step whose workflow lists none: `done` still goes on, `bad` fails it."""
    h.workflow("plain.md", outcomes=())
    h.pipeline({"main": [step("a", "plain.md", outcomes={"bad": "fail"}), step("b", "plain.md")]})
    h.new("good")
    result = h.cont("good")
    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b"]
    assert h.status("good")["status"] == "COMPLETE"
    h.reset_log()
    h.cues(**{"step:a": {"outcomes": ["bad"]}})
    h.new("bad")
    result = h.cont("bad")
    assert result.returncode == 1, result.stderr
    assert h.log() == ["step a"]
    assert h.status("bad")["status"] == "FAILED"
