"""Typed outputs and `when:` through the real CLI, with a command agent returning `output` in $SPECD_RESULT.

The agent (written below into the harness folder) records each call (step, attempt, prompt, SPECD_*
environment) and reports, per step, the next output from ``outputs.json``: the last one repeats. A step
listed in ``hold.json`` with an attempt number waits on that attempt until the test kills specd.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from typing import Any

import pytest
from brain_harness import Harness

AGENT = r'''
import json, os, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
step, attempt = os.environ["SPECD_STEP"], int(os.environ["SPECD_ATTEMPT"])
prompt = sys.stdin.read()
with open(HERE / "out-calls.jsonl", "a") as handle:
    handle.write(json.dumps({"step": step, "kind": os.environ["SPECD_KIND"], "attempt": attempt,
                             "prompt": prompt}) + "\n")
hold = json.loads((HERE / "hold.json").read_text()) if (HERE / "hold.json").exists() else {}
if hold.get(step) == attempt:
    (HERE / f"out-held-{step}").write_text("held")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
plan = json.loads((HERE / "outputs.json").read_text())
counts = json.loads((HERE / "out-counts.json").read_text()) if (HERE / "out-counts.json").exists() else {}
seen = counts.get(step, 0)
counts[step] = seen + 1
(HERE / "out-counts.json").write_text(json.dumps(counts))
report = {"outcome": "done", "summary": f"{step} attempt {attempt}"}
if step in plan:
    report["output"] = plan[step][min(seen, len(plan[step]) - 1)]
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps(report))
'''

PLAN_OUTPUT = {"type": "object", "required": ["files", "docs"], "additionalProperties": False,
               "properties": {"files": {"type": "array", "items": {"type": "string"}}, "docs": {"type": "boolean"}}}
EXECUTE = "Change exactly these files: {{ steps.plan.output.files | join(', ') }}."


class Outputs:
    """The harness's project, with the plan → execute → docs pipeline and the agent above."""

    def __init__(self, h: Harness, *, hook: bool = False, sandbox: bool = True) -> None:
        self.h = h
        self.agent = h.dir / "out-agent.py"
        self.agent.write_text(AGENT, encoding="utf-8")
        h.workflow("plan.md", body="Plan the change.")
        h.workflow("execute.md", body=EXECUTE)
        h.workflow("docs.md", body="Update the docs.")
        saw = h.root / "hook-saw.json"
        post = {"post": {"run": f'printf %s "$SPECD_OUTPUT_PLAN" > {shlex.quote(str(saw))}'}} if hook else {}
        h.pipeline({"main": [{"name": "plan", "workflow": "plan.md", "output": PLAN_OUTPUT},
                             {"name": "execute", "workflow": "execute.md", "hooks": post},
                             {"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"}]},
                   **({} if sandbox else {"agent": {"sandbox": False}}))
        h.new("t")

    def outputs(self, **per_step: list[Any]) -> None:
        (self.h.dir / "outputs.json").write_text(json.dumps(per_step), encoding="utf-8")

    def cont(self) -> Any:
        spec = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.agent))}"
        return self.h.specd("continue", "t", "--auto", "--agent", spec)

    def calls(self) -> list[dict[str, Any]]:
        path = self.h.dir / "out-calls.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def rows(self) -> list[dict[str, Any]]:
        return list(self.h.status("t")["history"])


def test_plan_output_fills_the_execute_prompt_reaches_a_hook_and_skips_docs(h: Harness) -> None:
    o = Outputs(h, hook=True)
    o.outputs(plan=[{"files": ["src/a.py", "src/b.py"], "docs": False}])

    result = o.cont()

    assert result.returncode == 0, result.stderr
    calls = o.calls()
    assert [c["step"] for c in calls] == ["plan", "execute"]  # docs never ran
    assert "Change exactly these files: src/a.py, src/b.py." in calls[1]["prompt"]
    assert '"required": ["files", "docs"]' in calls[0]["prompt"]  # the plan step was told what to return
    assert "$SPECD_RESULT" in calls[0]["prompt"]
    assert json.loads((h.root / "hook-saw.json").read_text()) == {"files": ["src/a.py", "src/b.py"], "docs": False}
    rows = [r for r in o.rows() if r["kind"] == "step"]
    assert rows[0]["step"] == "plan"
    assert rows[0]["output"] == {"files": ["src/a.py", "src/b.py"], "docs": False}
    docs = rows[-1]
    assert (docs["step"], docs["outcome"]) == ("docs", "skipped")
    assert (docs["when"], docs["when_value"]) == ("steps.plan.output.docs", False)
    assert "when 'steps.plan.output.docs' is false" in docs["summary"]
    assert "docs skipped (when steps.plan.output.docs is false)" in result.stderr + result.stdout
    shown = h.specd("status", "t").stdout  # piped: the plain text
    assert 'output of plan: {"files": ["src/a.py", "src/b.py"], "docs": false}' in shown
    assert "skipped: when 'steps.plan.output.docs' is false" in shown


def test_a_true_condition_runs_the_step(h: Harness) -> None:
    o = Outputs(h)
    o.outputs(plan=[{"files": [], "docs": True}])

    result = o.cont()

    assert result.returncode == 0, result.stderr
    assert [c["step"] for c in o.calls()] == ["plan", "execute", "docs"]
    assert "Change exactly these files: ." in o.calls()[1]["prompt"]


@pytest.mark.parametrize("sandbox", [True, False], ids=["jailed", "sandbox-false"])
def test_an_invalid_output_is_given_back_once_then_accepted(h: Harness, sandbox: bool) -> None:
    o = Outputs(h, sandbox=sandbox)
    o.outputs(plan=[{"files": "src/a.py", "docs": False}, {"files": ["src/a.py"], "docs": False}])

    result = o.cont()

    assert result.returncode == 0, result.stderr
    # specd's own save of the refused attempt, mid-step, is neither tampering (outside the jail: it was undone
    # and the step BLOCKED) nor someone else's edit (in the jail: "changed ... from outside the jail")
    assert "machinery" not in result.stderr
    assert "from outside the jail" not in result.stderr
    plans = [c for c in o.calls() if c["step"] == "plan"]
    assert [c["attempt"] for c in plans] == [1, 2]
    assert "refused" not in plans[0]["prompt"]
    assert "output.files: 'src/a.py' is not of type 'array'" in plans[1]["prompt"]
    rows = o.rows()
    refused = [r for r in rows if r["kind"] == "attempt"]
    assert [(r["step"], r["outcome"]) for r in refused] == [("plan", "invalid_output")]
    assert refused[0]["output_error"] == "output.files: 'src/a.py' is not of type 'array'"
    plan = next(r for r in rows if r["kind"] == "step" and r["step"] == "plan")
    assert plan["output"] == {"files": ["src/a.py"], "docs": False}
    assert "Change exactly these files: src/a.py." in o.calls()[2]["prompt"]


def test_an_output_that_never_validates_blocks_the_step_after_its_attempts(h: Harness) -> None:
    o = Outputs(h)
    o.outputs(plan=[{"files": ["a"]}])  # docs is missing every time

    result = o.cont()

    assert result.returncode == 1, result.stderr
    assert [c["attempt"] for c in o.calls()] == [1, 2, 3]
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    assert "output was refused 3 times" in status["reason"]
    assert "'docs' is a required property" in status["reason"]
    assert not [r for r in status["history"] if r["kind"] == "step"]  # no plan row: nothing later can read it


def test_a_refusal_survives_kill_9_and_no_finished_attempt_repeats(h: Harness) -> None:
    o = Outputs(h)
    o.outputs(plan=[{"files": 1, "docs": False}, {"files": ["x.py"], "docs": False}])
    (h.dir / "hold.json").write_text(json.dumps({"plan": 2}), encoding="utf-8")
    spec = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(o.agent))}"
    proc = _start(h, spec)
    marker = h.dir / "out-held-plan"
    _wait(lambda: marker.exists(), proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    (h.dir / "hold.json").unlink()

    result = o.cont()

    assert result.returncode == 0, result.stderr
    plans = [c for c in o.calls() if c["step"] == "plan"]
    assert [c["attempt"] for c in plans] == [1, 2, 3]  # the killed attempt runs again; the refused one does not
    assert "output.files: 1 is not of type 'array'" in plans[2]["prompt"]
    refused = [r for r in o.rows() if r["kind"] == "attempt"]
    assert len(refused) == 1
    assert refused[0]["attempt"] == 1
    assert "Change exactly these files: x.py." in o.calls()[-1]["prompt"]


def _start(h: Harness, spec: str) -> Any:
    import subprocess

    proc = subprocess.Popen(h.argv("continue", "t", "--auto", "--agent", spec), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=h.env, cwd=h.root,
                            start_new_session=True)
    h.children.append(proc)
    return proc


def _wait(ready: Any, proc: Any) -> None:
    import time

    end = time.monotonic() + 60
    while time.monotonic() < end:
        if ready():
            return
        if proc.poll() is not None:
            pytest.fail(f"specd ended (code {proc.returncode}) first:\n{proc.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail("the agent never held")


def test_a_condition_over_facts_and_specd_environment(h: Harness) -> None:
    o = Outputs(h)
    o.outputs(plan=[{"files": [], "docs": True}])
    h.pipeline({"main": [{"name": "plan", "workflow": "plan.md", "output": PLAN_OUTPUT},
                         {"name": "docs", "workflow": "docs.md",
                          "when": "mode == 'auto' and env.SPECD_WITH_DOCS == 'yes' and steps.plan.outcome == 'done'"}]})
    h.env["SPECD_WITH_DOCS"] = "no"

    assert o.cont().returncode == 0
    assert [c["step"] for c in o.calls()] == ["plan"]
    skipped = o.rows()[-1]
    assert (skipped["step"], skipped["outcome"], skipped["when_value"]) == ("docs", "skipped", False)


def test_a_name_that_is_known_only_at_the_step_blocks_it_with_the_reason(h: Harness) -> None:
    o = Outputs(h)
    o.outputs(plan=[{"files": [], "docs": True}])
    h.pipeline({"main": [{"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"},
                         {"name": "plan", "workflow": "plan.md", "output": PLAN_OUTPUT}]})

    result = o.cont()

    assert result.returncode == 1, result.stdout + result.stderr
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    assert "step 'docs': when 'steps.plan.output.docs' cannot be evaluated" in status["reason"]
    assert "nothing named 'plan' is recorded (known so far: no step has finished yet)" in status["reason"]
    assert not (h.dir / "out-calls.jsonl").exists()  # nothing ran


def test_a_workflow_placeholder_with_nothing_recorded_blocks_the_step(h: Harness) -> None:
    o = Outputs(h)
    h.pipeline({"main": [{"name": "execute", "workflow": "execute.md"},
                         {"name": "plan", "workflow": "plan.md", "output": PLAN_OUTPUT}]})

    result = o.cont()

    assert result.returncode == 1, result.stdout + result.stderr
    reason = h.status("t")["reason"]
    assert "execute.md: nothing named 'plan' is recorded (known so far: no step has finished yet)" in reason


def test_a_workflow_frontmatter_declares_the_output_and_a_hook_workflow_reads_it(h: Harness) -> None:
    o = Outputs(h)
    h.workflow("plan.md", body="Plan the change.",
               extra="output:\n  type: object\n  required: [files]\n  properties:\n    files: {type: array}")
    h.hook("check.md", body="Check that {{ steps.plan.output.files | length }} files changed.")
    h.pipeline({"main": [{"name": "plan", "workflow": "plan.md"},
                         {"name": "execute", "workflow": "execute.md", "hooks": {"post": "check.md"}}]})
    o.outputs(plan=[{"files": "one"}, {"files": ["a.py", "b.py", "c.py"]}])

    result = o.cont()

    assert result.returncode == 0, result.stdout + result.stderr
    calls = o.calls()
    assert [(c["kind"], c["step"], c["attempt"]) for c in calls] == [
        ("step", "plan", 1), ("step", "plan", 2), ("step", "execute", 1), ("hook", "execute", 1)]
    assert "output.files: 'one' is not of type 'array'" in calls[1]["prompt"]
    assert "Check that 3 files changed." in calls[3]["prompt"]


def test_a_frontmatter_output_that_is_not_an_object_schema_is_bad_input_at_the_step(h: Harness) -> None:
    o = Outputs(h)
    h.workflow("plan.md", body="Plan.", extra="output:\n  type: array")
    h.pipeline({"main": [{"name": "plan", "workflow": "plan.md"}]})

    result = o.cont()

    assert result.returncode == 2, result.stdout + result.stderr
    assert "plan.md:4: frontmatter output: the output must be an object" in result.stderr
    assert "Traceback" not in result.stderr
