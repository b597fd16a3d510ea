"""Run control: cancel, retry, rerun --from, step timeout, stall detection, logs -f."""

from __future__ import annotations

import subprocess

from brain_harness import Harness, held_alive, wait_until
from test_steer_reorder import steps


def abc(h: Harness, **b: object) -> None:
    h.workflow("work.md", outcomes=("done", "bad"))
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md", **b},
                         {"name": "c", "workflow": "work.md"}]})
    h.new("t")


def test_cancel_stops_a_running_task_leaves_no_orphan_and_is_final(h: Harness) -> None:
    abc(h)
    h.cues(**{"step:b": {"hold": "never"}})
    proc = h.start("t")
    held = h.wait_held("b", proc)

    cancelled = h.specd("cancel", "t")

    assert cancelled.returncode == 0, cancelled.stderr
    assert f"pid {proc.pid}" in cancelled.stdout
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 4  # the stopped run ends as CANCELLED (its own code), not as an interruption or success
    assert "CANCELLED" in out + err
    assert "specd continue t" not in out + err
    assert wait_until(lambda: not held_alive(held), deadline=10)
    status = h.status("t")
    assert status["status"] == "CANCELLED"
    assert status["running"] is None

    h.cues()
    again = h.specd("continue", "t")

    assert again.returncode == 2
    assert "specd rerun t --from" in again.stderr
    assert h.log() == ["step a", "step b"]


def test_failed_is_final_for_continue_and_retry_reruns_the_failed_step(h: Harness) -> None:
    abc(h, outcomes={"bad": "fail"})
    h.cues(**{"step:b": {"outcomes": ["bad", "done"]}})
    first = h.cont("t")
    assert first.returncode == 1, first.stderr
    assert h.status("t")["status"] == "FAILED"

    refused = h.specd("continue", "t")

    assert refused.returncode == 2
    assert "specd retry t" in refused.stderr
    assert h.log() == ["step a", "step b"]

    retried = h.specd("retry", "t")

    assert retried.returncode == 0, retried.stderr
    assert h.log() == ["step a", "step b", "step b", "step c"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [(e["step"], e["outcome"]) for e in status["history"]] == [
        ("a", "done"), ("b", "bad"), ("b", "done"), ("c", "done")]


def test_rerun_from_a_step_marks_later_rows_superseded_and_keeps_them(h: Harness) -> None:
    abc(h)
    assert h.cont("t").returncode == 0

    rerun = h.specd("rerun", "t", "--from", "b")

    assert rerun.returncode == 0, rerun.stderr
    assert h.log() == ["step a", "step b", "step c", "step b", "step c"]
    history = h.status("t")["history"]
    assert [(e["step"], bool(e["superseded"])) for e in history] == [
        ("a", False), ("b", True), ("c", True), ("b", False), ("c", False)]
    assert h.status("t")["status"] == "COMPLETE"


def test_rerun_reopens_a_complete_task_for_a_phase_added_later(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "plan", "workflow": "work.md"},
                         {"name": "phases", "pipeline": "ph", "foreach": "phases"}],
                "ph": steps("execute", "review")})
    h.new("t")
    roadmap = h.task_dir("t") / "ROADMAP.md"
    roadmap.write_text("# Roadmap\n\n### Phase 1: One\n", encoding="utf-8")
    assert h.cont("t").returncode == 0
    roadmap.write_text("# Roadmap\n\n### Phase 1: One\n\n### Phase 2: Two\n", encoding="utf-8")

    bad = h.specd("rerun", "t", "--from", "execute", "--phase", "07")
    rerun = h.specd("rerun", "t", "--from", "execute", "--phase", "02")

    assert bad.returncode == 2
    assert "no phase '07'" in bad.stderr
    assert rerun.returncode == 0, rerun.stderr
    assert h.log() == ["step plan", "step execute 01", "step review 01", "step execute 02", "step review 02"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert not any(e["superseded"] for e in status["history"])


def test_a_hanging_agent_is_stopped_at_its_timeout_and_blocks_the_task(h: Harness) -> None:
    abc(h, timeout=1)
    h.cues(**{"step:b": {"hold": "never"}})

    result = h.cont("t")

    assert result.returncode == 1, result.stderr
    held = h.wait_held("b")
    assert wait_until(lambda: not held_alive(held), deadline=10)
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    assert "timed out after 1 s" in status["reason"]
    assert h.log() == ["step a", "step b"]


def test_a_silent_agent_shows_as_stalled_while_the_run_is_alive(h: Harness) -> None:
    abc(h)
    h.env["SPECD_STALL_SECONDS"] = "1"
    h.cues(**{"step:b": {"hold": "go"}})
    proc = h.start("t")
    h.wait_held("b", proc)

    def stalled() -> bool:
        running = h.status("t")["running"]
        return bool(running and running["stalled"])

    assert wait_until(stalled, deadline=30)
    status = h.status("t")
    assert status["running"]["pid"] == proc.pid
    assert status["status_note"].startswith(f"running (pid {proc.pid}, last agent activity")
    assert "stalled" in status["status_note"]
    assert status["hint"] == ""  # never "resume with specd continue" while the lock is held

    h.release("go")
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert h.status("t")["running"] is None


def test_logs_follow_prints_step_lines_while_another_process_runs_and_exits_at_its_end(h: Harness) -> None:
    abc(h)
    h.cues(**{"step:a": {"hold": "go"}})
    proc = h.start("t")
    h.wait_held("a", proc)
    follower = subprocess.Popen(h.argv("logs", "t", "-f"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=h.env, cwd=h.root)
    h.children.append(follower)

    h.release("go")
    out, err = follower.communicate(timeout=60)

    assert follower.returncode == 0, err
    lines = out.splitlines()
    assert any(line.endswith("▶ a (attempt 1)") for line in lines)
    assert any("✔ c → done" in line for line in lines)
    assert lines[-1].endswith("run finished: COMPLETE")
    proc.communicate(timeout=30)


def test_logs_of_one_step_show_its_events_and_transcript(h: Harness) -> None:
    abc(h)
    assert h.cont("t").returncode == 0

    result = h.specd("logs", "t", "--step", "b")

    assert result.returncode == 0, result.stderr
    assert "✔ b → done" in result.stdout
    assert "▶ a" not in result.stdout
    assert "--- b (step, done)" in result.stdout
