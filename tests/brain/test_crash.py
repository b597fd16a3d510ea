"""Crash safety: SIGKILL a real `specd continue` at many points and resume until complete.

Where each kill lands depends on the machine, so the assertions are the
invariants that must hold wherever it lands: the state always parses, the run
always completes on resume, every finished step is recorded exactly once, and
an agent call is repeated only when its step was the one interrupted.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from brain_harness import RUN_TIMEOUT, Harness, kill_group

AGENT = r'''
import os, sys, time
from pathlib import Path
sys.stdin.read()
step, phase = os.environ["SPECD_STEP"], os.environ["SPECD_PHASE"]
with open(os.environ["CRASH_LOG"], "a") as log:
    log.write(f"{step} {phase}".strip() + "\n")
time.sleep(0.15)
if step == "b":
    Path(os.environ["SPECD_TASK_DIR"], "ROADMAP.md").write_text("### Phase 1: One\n\n### Phase 2: Two\n")
'''

EXPECTED = ["a", "b", "x 01", "y 01", "x 02", "y 02"]


def collapse(lines: list[str]) -> list[str]:
    return [line for i, line in enumerate(lines) if i == 0 or lines[i - 1] != line]


def test_sigkill_at_many_points_never_loses_or_repeats_finished_work(h: Harness, tmp_path: Path) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"},
                         {"name": "p", "pipeline": "phase", "foreach": "phases"}],
                "phase": [{"name": "x", "workflow": "w.md"}, {"name": "y", "workflow": "w.md"}]})
    h.new("t")
    agent = tmp_path / "crash_agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    log = tmp_path / "crash.log"
    env = {**h.env, "CRASH_LOG": str(log), "SPECD_JAIL_WRITE": str(tmp_path)}  # the log lies beside the project
    argv = h.argv("continue", "t", "--auto", "--agent", f"cmd:{sys.executable} {agent}")
    state_path = h.task_dir("t") / ".pipeline-state.json"
    rng = random.Random(20261122)
    kills = 0
    for attempt in range(13):
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env=env, cwd=h.root, start_new_session=True)
        h.children.append(proc)
        try:
            # Twelve kills at random moments, then one run left to finish (bounded by RUN_TIMEOUT).
            proc.wait(timeout=rng.uniform(0.3, 1.2) if attempt < 12 else RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            kill_group(proc.pid)
            kills += 1
            time.sleep(0.2)  # let the orphaned agent (its own group) finish or be reaped
        if state_path.exists():
            json.loads(state_path.read_text(encoding="utf-8"))  # parses after every kill
        if proc.returncode == 0:
            break
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert kills >= 1, "no kill landed; the test proved nothing"
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    steps = [f"{e['step']} {e['phase'] or ''}".strip() for e in status["history"] if e["kind"] == "step"]
    assert steps == EXPECTED  # each finished step recorded once, in order
    assert collapse(log.read_text(encoding="utf-8").splitlines()) == EXPECTED
