"""Crash: SIGKILL a real `specd continue` at seeded random moments, resume, repeat until it completes.

Each run is a fresh project: two steps, then a phase loop over two phases of
two steps, with a `run:` post-step hook after every step. The command agent
and the hook write a ledger line when they start. Kills land during steps,
during hooks and between state writes. After every kill the run state must
load; at the end the run must be COMPLETE, the history must hold every step
and every hook exactly once, in order, and the ledger, with back-to-back
repeats collapsed (the interrupted part re-runs once), must equal that order:
a finished step or hook never ran again.
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
from torture_size import size

from specd.state.store import StateStore

AGENT = r'''
import os, random, sys, time
from pathlib import Path
sys.stdin.read()
here = Path(os.environ["CRASH_DIR"])
with open(here / "groups.txt", "a") as groups:
    groups.write(f"{os.getpgid(0)}\n")
step, phase = os.environ["SPECD_STEP"], os.environ["SPECD_PHASE"]
with open(here / "ledger.txt", "a") as log:
    log.write(f"step {step} {phase}".strip() + "\n")
time.sleep(random.uniform(0.05, 0.3))
if step == "b":
    Path(os.environ["SPECD_TASK_DIR"], "ROADMAP.md").write_text("### Phase 1: One\n\n### Phase 2: Two\n")
'''
HOOK = 'echo "hook $SPECD_STEP $SPECD_PHASE" | sed "s/ *$//" >> "$CRASH_DIR/ledger.txt"; sleep 0.05'
ORDER = [("a", None), ("b", None), ("x", "01"), ("y", "01"), ("x", "02"), ("y", "02")]
EXPECTED_LEDGER = [line for step, phase in ORDER
                   for line in (f"step {step} {phase or ''}".strip(), f"hook {step} {phase or ''}".strip())]
RUNS, KILLS_PER_RUN = size(3, 55), size(8, 10)
TOTALS = {"runs": 0, "kills": 0}


def one_run(tmp: Path, seed: int) -> int:
    h = Harness(tmp)
    try:
        h.workflow("w.md")
        h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"},
                             {"name": "p", "pipeline": "phase", "foreach": "phases"}],
                    "phase": [{"name": "x", "workflow": "w.md"}, {"name": "y", "workflow": "w.md"}]},
                   hooks={"post-step": {"run": HOOK}})
        h.new("t")
        (h.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        env = {**h.env, "CRASH_DIR": str(h.dir)}
        argv = h.argv("continue", "t", "--auto", "--agent", f"cmd:{sys.executable} {h.dir / 'agent.py'}")
        rng = random.Random(seed)
        kills = 0
        for attempt in range(KILLS_PER_RUN + 1):
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True, env=env, cwd=h.root, start_new_session=True)
            h.children.append(proc)
            try:
                proc.wait(timeout=rng.uniform(0.3, 1.2) if attempt < KILLS_PER_RUN else RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=10)
                kills += 1
                kill_group(proc.pid)
                for group in (h.dir / "groups.txt").read_text().split() if (h.dir / "groups.txt").exists() else []:
                    kill_group(int(group))  # an agent in its own group would keep writing the ledger
                time.sleep(0.05)
            StateStore(h.task_dir("t"), "t").load()  # parses at every kill point (raises if not)
            if proc.returncode == 0:
                break
        assert proc.returncode == 0, f"seed {seed}: " + (proc.stderr.read() if proc.stderr else "")
        state = StateStore(h.task_dir("t"), "t").load()
        assert state is not None
        assert state.status == "COMPLETE", f"seed {seed}"
        rows = [(r["kind"], r["step"], r["phase"]) for r in state.history]
        assert rows == [(kind, step, phase) for step, phase in ORDER for kind in ("step", "hook")], f"seed {seed}"
        ledger = (h.dir / "ledger.txt").read_text(encoding="utf-8").splitlines()
        collapsed = [line for i, line in enumerate(ledger) if i == 0 or ledger[i - 1] != line]
        assert collapsed == EXPECTED_LEDGER, f"seed {seed}: {ledger}"
        return kills
    finally:
        h.cleanup()


def test_sigkill_at_random_moments_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    for run in range(RUNS):
        TOTALS["kills"] += one_run(tmp_path / f"run{run}", seed=1000 + run)
        TOTALS["runs"] += 1
    print(f"\ncrash torture: {TOTALS['runs']} runs, {TOTALS['kills']} kills, 0 losses")  # noqa: T201
    assert TOTALS["kills"] >= RUNS, "too few kills landed; the test proved little"
    (tmp_path / "figures.json").write_text(json.dumps(TOTALS))
