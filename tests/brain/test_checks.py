"""`checks:` on a step, through the real CLI: a command agent that fixes (or never fixes) a bug, and a check
that fails until it is fixed, run in the project tier after each attempt."""

from __future__ import annotations

import json
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

from brain_harness import Harness, kill_group, wait_until

# The agent: records each call (its step and prompt), and on the execute step's FIX_ON-th call (0: never)
# writes the fixed calc.py.
AGENT = r'''
import json, os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
prompt = sys.stdin.read()
step = os.environ["SPECD_STEP"]
calls = here / "calls.jsonl"
before = [json.loads(l) for l in calls.read_text().splitlines()] if calls.exists() else []
with calls.open("a") as handle:
    handle.write(json.dumps({"step": step, "prompt": prompt}) + "\n")
n = 1 + sum(1 for c in before if c["step"] == step)
fix_on = int((here / "fix_on").read_text()) if (here / "fix_on").exists() else 0
if step == "execute" and fix_on and n >= fix_on:
    Path("calc.py").write_text("def add(a, b):\n    return a + b\n")
'''

# The check: a tiny test of calc.add; each run is logged, and it waits for a `go` file when asked to hold.
CHECK = r'''
import os, sys, time
from pathlib import Path
here = Path(".harness")
with (here / "checks.log").open("a") as log:
    log.write(f"attempt {os.environ['SPECD_ATTEMPT']} kind {os.environ['SPECD_KIND']}\n")
if (here / "hold").exists() and not (here / "go").exists():
    (here / "check-held").write_text(str(os.getpid()))
    deadline = time.monotonic() + 30
    while not (here / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
sys.path.insert(0, os.getcwd())
# No calc.pyc: the fix is as long as the bug, and written within the second the first check compiled it, so a pyc
# (checked by the source's size and mtime in whole seconds) would still say the bug on a fast machine.
sys.dont_write_bytecode = True
from calc import add
got = add(2, 2)
if got != 4:
    print(f"FAILED test_add: add(2, 2) returned {got}, expected 4")
    sys.exit(1)
print("1 passed")
'''

BUG = "def add(a, b):\n    return a - b\n"


def project(h: Harness, *, fix_on: int, **execute: Any) -> None:
    h.workflow("work.md")
    (h.root / "calc.py").write_text(BUG, encoding="utf-8")
    (h.root / "check_calc.py").write_text(CHECK, encoding="utf-8")
    h.agent.write_text(AGENT, encoding="utf-8")
    (h.dir / "fix_on").write_text(str(fix_on), encoding="utf-8")
    check = f"{shlex.quote(sys.executable)} check_calc.py"
    h.pipeline({"main": [{"name": "execute", "workflow": "work.md", "checks": [check], **execute},
                         {"name": "after", "workflow": "work.md"},
                         {"name": "giveup", "workflow": "work.md"}]})
    h.new("t")


def calls(h: Harness, step: str = "execute") -> list[dict[str, Any]]:
    return [c for c in h.calls() if c["step"] == step]


def rows(h: Harness, kind: str) -> list[dict[str, Any]]:
    return [r for r in h.status("t")["history"] if r["kind"] == kind]


def test_an_agent_that_fixes_the_code_on_its_second_try_ends_the_step_done(h: Harness) -> None:
    project(h, fix_on=2)

    run = h.cont("t")

    assert run.returncode == 0, run.stderr
    prompts = [c["prompt"] for c in calls(h)]
    assert len(prompts) == 2
    assert "FAILED test_add" not in prompts[0]
    assert "FAILED test_add: add(2, 2) returned 0, expected 4" in prompts[1]  # the first attempt's output
    assert "check_calc.py` exited with status 1" in prompts[1]
    assert "attempt 2 of 3" in prompts[1]
    rounds = rows(h, "checks")
    assert [(r["round"], r["outcome"]) for r in rounds] == [(1, "failed"), (2, "passed")]
    assert rounds[0]["checks"][0]["status"] == 1
    assert "returned 0" in rounds[0]["checks"][0]["output"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [(e["step"], e["kind"], e["outcome"]) for e in status["history"]] == [
        ("execute", "step", "done"), ("execute", "checks", "failed"), ("execute", "step", "done"),
        ("execute", "checks", "passed"), ("after", "step", "done"), ("giveup", "step", "done")]
    assert status["checks"]["attempt"] == 2
    assert status["checks"]["outcome"] == "passed"
    assert (h.dir / "checks.log").read_text().splitlines() == ["attempt 1 kind check", "attempt 2 kind check"]
    rendered = (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")
    assert "| execute | main | - | checks | failed |" in rendered
    assert "main/execute: 2 visits" not in rendered  # two attempts, one visit


def test_an_agent_that_never_fixes_it_is_held_after_three_attempts_and_the_answers_work(h: Harness) -> None:
    project(h, fix_on=0)

    held = h.cont("t")

    assert held.returncode == 3, held.stderr
    assert len(calls(h)) == 3
    status = h.status("t")
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["waiting"]["kind"] == "checks_failed"
    assert "check_calc.py" in status["waiting"]["check"]
    assert status["waiting"]["exit_status"] == 1
    assert "check_calc.py` exited with status 1 (attempt 3 of 3)" in status["reason"]
    assert status["checks"]["attempt"] == 3
    assert status["checks"]["of"] == 3
    assert status["checks"]["outcome"] == "checks_failed"
    assert calls(h, "after") == []  # nothing after the step ran
    shown = h.specd("status", "t")
    assert "checks: attempt 3 of 3" in shown.stdout

    refused = h.cont("t")  # a held wait: continue alone does not run the step again
    assert refused.returncode == 3
    assert len(calls(h)) == 3

    (h.dir / "fix_on").write_text("4", encoding="utf-8")  # the next try fixes it
    approved = h.specd("approve", "t", "--note", "look at the operator")
    assert approved.returncode == 0, approved.stderr
    done = h.cont("t")

    assert done.returncode == 0, done.stderr
    assert len(calls(h)) == 4
    assert "returned 0, expected 4" in calls(h)[3]["prompt"]  # the last failure, in the approved run's prompt
    assert "attempt 1 of 3" in calls(h)[3]["prompt"]
    assert "look at the operator" in calls(h)[3]["prompt"]  # the approver's note too
    assert [r["outcome"] for r in rows(h, "checks")] == ["failed", "failed", "checks_failed", "passed"]
    assert h.status("t")["status"] == "COMPLETE"


def test_skip_and_reject_answer_a_checks_failed_wait(h: Harness) -> None:
    project(h, fix_on=0, attempts=1)

    assert h.cont("t").returncode == 3
    rejected = h.specd("reject", "t", "--note", "subtract is wrong, add instead")
    assert rejected.returncode == 0, rejected.stderr
    assert h.cont("t").returncode == 3  # runs the step again, once (attempts: 1), and still fails

    assert len(calls(h)) == 2
    assert "subtract is wrong, add instead" in calls(h)[1]["prompt"]
    skipped = h.specd("skip", "t")
    assert skipped.returncode == 0, skipped.stderr
    done = h.cont("t")

    assert done.returncode == 0, done.stderr
    assert len(calls(h)) == 2
    assert len(calls(h, "after")) == 1
    assert h.status("t")["history"][-3]["outcome"] == "skipped"


def test_checks_failed_is_routed_as_the_file_says(h: Harness) -> None:
    project(h, fix_on=0, attempts=2, outcomes={"checks_failed": "giveup"})

    run = h.cont("t")

    assert run.returncode == 0, run.stderr
    assert len(calls(h)) == 2
    assert calls(h, "after") == []  # jumped over
    assert len(calls(h, "giveup")) == 1
    assert [r["outcome"] for r in rows(h, "checks")] == ["failed", "checks_failed"]
    assert h.status("t")["status"] == "COMPLETE"


def test_kill_9_during_a_check_runs_the_check_again_and_no_finished_attempt(h: Harness) -> None:
    project(h, fix_on=1)
    (h.dir / "hold").write_text("", encoding="utf-8")
    proc = h.start("t")
    assert wait_until(lambda: (h.dir / "check-held").exists(), 30), "the check never started"

    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    kill_group(proc.pid)
    (h.dir / "go").write_text("", encoding="utf-8")
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    assert len(calls(h)) == 1  # the agent's finished attempt did not run again
    assert (h.dir / "checks.log").read_text().splitlines() == ["attempt 1 kind check"] * 2  # the check did
    assert [(r["round"], r["outcome"]) for r in rows(h, "checks")] == [(1, "passed")]
    assert [e["kind"] for e in h.status("t")["history"] if e["step"] == "execute"] == ["step", "checks"]


def test_the_pipeline_shows_a_steps_checks(h: Harness) -> None:
    project(h, fix_on=1, attempts=2)

    shown = h.specd("pipeline", "show", "--json")
    text = h.specd("pipeline", "show")

    assert shown.returncode == 0, shown.stderr
    step = json.loads(shown.stdout)["pipelines"]["main"][0]
    assert step["attempts"] == 2
    assert step["checks"][0]["run"].endswith("check_calc.py")
    assert step["checks"][0]["timeout"] == 300
    assert "checks: " in text.stdout
    assert "check_calc.py" in text.stdout
    assert "2 attempts" in text.stdout


def test_a_check_runs_in_the_project_tier(h: Harness, tmp_path: Path) -> None:
    """No network and no write outside the project, as for a `run:` hook (when the jail is there)."""
    outside = tmp_path / "outside.txt"
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "execute", "workflow": "work.md",
                          "checks": [f"touch {shlex.quote(str(outside))} 2>/dev/null; echo ran > .harness/ran"]}]})
    h.new("t")

    run = h.cont("t")

    assert run.returncode == 0, run.stderr
    assert (h.dir / "ran").read_text() == "ran\n"
    from specd.system import jail

    if jail.active():
        assert not outside.exists()


def test_no_check_runs_when_the_agent_escalates_to_a_human(h: Harness) -> None:
    project(h, fix_on=0, outcomes={"escalate": "stop", "done": "next"})
    h.agent.write_text(h.agent.read_text() + "\nPath(os.environ['SPECD_RESULT']).write_text("
                       "json.dumps({'outcome': 'escalate'}))\n", encoding="utf-8")  # the agent asks for a person

    run = h.cont("t")

    assert run.returncode == 3, run.stderr
    assert len(calls(h)) == 1
    assert not (h.dir / "checks.log").exists()
    assert h.status("t")["waiting"]["kind"] == "outcome"
