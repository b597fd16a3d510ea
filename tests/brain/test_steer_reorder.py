"""Editing the pipeline file mid-task: the run keeps its place by step name, loses nothing, repeats nothing."""

from __future__ import annotations

import signal
from typing import Any

from brain_harness import Harness, held_alive, kill_group, wait_until

from specd.pipeline import load_pipeline, replan
from specd.state.model import RunState
from specd.tasks.project import Project


def steps(*names: str, pause: str = "") -> list[dict[str, Any]]:
    return [{"name": n, "workflow": "work.md", **({"pause_in_semi_auto": True} if n == pause else {})}
            for n in names]


def finished(h: Harness, task: str) -> list[tuple[str, str | None]]:
    return [(e["step"], e["phase"]) for e in h.status(task)["history"] if e["kind"] == "step"]


def stop_before_c(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": steps("a", "b", "c", "d", pause="c")})
    h.new("t")
    first = h.cont("t", "--semi-auto")  # EOF at the gate before c
    assert first.returncode == 3, first.stderr
    assert h.log() == ["step a", "step b"]


def test_reordered_steps_run_each_unfinished_step_once_in_the_new_order(h: Harness) -> None:
    stop_before_c(h)
    h.pipeline({"main": steps("d", "c", "b", "a", pause="c")})

    plan = h.status("t")
    assert [p["step"] for p in plan["plan"]] == ["d", "c"]  # status shows the plan under the edited file
    result = h.specd("continue", "t", "--approve")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b", "step d", "step c"]
    assert finished(h, "t") == [("a", None), ("b", None), ("d", None), ("c", None)]
    assert "the pipeline file changed" in result.stderr
    assert "moved" in result.stderr
    assert "goes on at 'd'" in result.stderr
    assert h.status("t")["status"] == "COMPLETE"


def test_a_step_disabled_while_the_run_waits_is_named_and_passed_by(h: Harness) -> None:
    stop_before_c(h)
    edited = steps("d", "c", "b", "a", pause="c")
    edited[1]["enabled"] = False
    h.pipeline({"main": edited})

    result = h.specd("continue", "t", "--approve")

    assert result.returncode == 0, result.stderr
    assert "main: moved d, c, b, a; disabled (passed by) c" in result.stderr  # the move, and what will not run
    assert h.log() == ["step a", "step b", "step d"]


def test_the_step_the_run_waits_at_disabled_is_said_to_be_passed_by_not_to_run(h: Harness) -> None:
    """The gate before c is answered after c was turned off: status, the re-plan notice and the answer each name
    d as where the run goes on, never c as the step that runs."""
    stop_before_c(h)
    edited = steps("a", "b", "c", "d", pause="c")
    edited[2]["enabled"] = False
    h.pipeline({"main": edited})

    view = h.status("t")
    assert view["next"]["step"] == "d", view["next"]
    assert "the run goes on at 'd' in main (passing by c: disabled)" in view["plan_notices"], view["plan_notices"]
    result = h.specd("continue", "t", "--approve")

    assert result.returncode == 0, result.stderr
    assert "step 'c' is disabled in the pipeline file now: the run passes it by" in result.stderr, result.stderr
    assert "'c' runs" not in result.stderr
    assert "goes on at 'c'" not in result.stderr
    assert h.log() == ["step a", "step b", "step d"]


def test_removing_a_finished_step_and_inserting_a_new_one_loses_and_repeats_nothing(h: Harness) -> None:
    stop_before_c(h)
    h.pipeline({"main": steps("b", "x", "c", "d", pause="c")})

    result = h.specd("continue", "t", "--approve")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b", "step x", "step c", "step d"]
    assert finished(h, "t") == [("a", None), ("b", None), ("x", None), ("c", None), ("d", None)]
    assert "added x" in result.stderr
    assert "removed a" in result.stderr


def test_removing_the_step_the_run_waits_at_says_so_and_goes_on_with_the_next_unfinished(h: Harness) -> None:
    stop_before_c(h)
    h.pipeline({"main": steps("a", "b", "d")})

    result = h.specd("continue", "t", "--auto")

    assert result.returncode == 0, result.stderr  # the gate it waited at is gone with its step
    assert "step 'c' of main, where the run stood, was removed" in result.stderr
    assert h.log() == ["step a", "step b", "step d"]


def test_reorder_inside_a_foreach_phases_pipeline_mid_phase(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "phases", "pipeline": "ph", "foreach": "phases"}],
                "ph": steps("p1", "p2", "p3", "p4", pause="p3")})
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: One\n\n### Phase 2: Two\n",
                                               encoding="utf-8")
    first = h.cont("t", "--semi-auto")
    assert first.returncode == 3, first.stderr
    assert h.log() == ["step p1 01", "step p2 01"]
    h.pipeline({"main": [{"name": "phases", "pipeline": "ph", "foreach": "phases"}],
                "ph": steps("p4", "p3", "p2", "p1", pause="p3")})

    # --approve answers the waiting gate of phase 01; "proceed" answers phase 02's new gate at p3
    result = h.specd("continue", "t", "--approve", input="proceed\n")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step p1 01", "step p2 01", "step p4 01", "step p3 01",
                       "step p4 02", "step p3 02", "step p2 02", "step p1 02"]
    assert sorted(finished(h, "t")) == sorted({(s, p) for s in ("p1", "p2", "p3", "p4") for p in ("01", "02")})


def test_a_state_saved_with_an_index_cursor_is_migrated_to_step_names(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": steps("a", "b", "c")})
    config = load_pipeline(Project(h.root))
    old = RunState.from_dict({"task": "t", "pipeline_digest": config.digest,
                              "cursor": [{"pipeline": "main", "index": 2, "phase": None, "visits": {"a": 1}}]})

    replan.replan(old, config)

    frame = old.cursor[0]
    assert (frame.step, frame.done, frame.index, frame.visits) == ("c", ["a", "b"], None, {"a": 1})


def test_approving_a_gate_whose_step_was_renamed_says_so_instead_of_that_it_runs(h: Harness) -> None:
    """Found by hand: with c renamed while its gate waited, `specd approve` said "step 'c' runs when the task goes
    on", and the run then stopped at the renamed step's own gate."""
    stop_before_c(h)
    h.pipeline({"main": steps("a", "b", "cee", "d", pause="cee")})

    answered = h.specd("approve", "t")

    assert answered.returncode == 0, answered.stderr
    said = answered.stdout + answered.stderr
    assert "step 'c' is no longer in the pipeline file (renamed or removed)" in said, said
    assert "'c' runs" not in said
    assert h.status("t")["next"]["step"] == "cee"


def test_a_killed_step_disabled_before_the_resume_is_not_shown_as_next(h: Harness) -> None:
    """Found by hand: `kill -9` in step b, then b turned off. `specd status` said "next: b" (the step the killed
    run was in), while `continue` passed b by and went on at c."""
    h.workflow("work.md")
    h.pipeline({"main": steps("a", "b", "c")})
    h.new("t")
    h.cues(**{"step:b": {"hold": "never"}})
    proc = h.start("t")
    held = h.wait_held("b", proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=20)
    kill_group(held["pgid"])
    assert wait_until(lambda: not held_alive(held))
    assert h.status("t")["next"]["step"] == "b"  # the killed step runs again
    edited = steps("a", "b", "c")
    edited[1]["enabled"] = False
    h.pipeline({"main": edited})

    view = h.status("t")

    assert view["next"]["step"] == "c", view["next"]
    assert [p["step"] for p in view["plan"]] == ["c"]
    h.cues()
    resumed = h.cont("t")
    assert resumed.returncode == 0, resumed.stderr
    assert h.log() == ["step a", "step b", "step c"]  # b's killed call, then c: b never ran again
