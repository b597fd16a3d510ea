"""A long run with git on: what git stores per step stays flat, and what is committed is enough to resume.

Bytes per step are the on-disk (compressed) sizes of the objects each step's two commits add. With
the growing logs committed whole (events.jsonl, the history), they grew with the run; now events stay
out of git and the history is sealed in fixed-size files (state/history.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from git_harness import GitProject

LONG = 300
WINDOW = 50


def added_bytes(gp: GitProject, commit: str) -> int:
    """What ``commit`` added to the object store: its own objects not reachable from its parent."""
    names = gp.git("rev-list", "--objects", commit, "--not", f"{commit}^").split("\n")
    query = "".join(line.split(" ")[0] + "\n" for line in names if line)
    sizes = subprocess.run(["git", "cat-file", "--batch-check=%(objectsize:disk)"], cwd=gp.root, input=query,
                           capture_output=True, text=True, check=True).stdout.split()
    return sum(map(int, sizes))


def test_bytes_git_adds_per_step_stay_flat_over_300_steps(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=tuple(f"s{i}" for i in range(LONG)))
    gp.new("t")
    done = subprocess.run(gp.argv("continue", "t", "--auto", "--agent", "cmd:true"), cwd=gp.root, env=gp.env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log = gp.git("log", "--reverse", "--format=%H %s").splitlines()
    shas = {subject: sha for sha, subject in (line.split(" ", 1) for line in log)}
    per_step = [added_bytes(gp, shas[f"docs(t): starting s{i}"]) + added_bytes(gp, shas[f"docs(t): s{i} complete"])
                for i in range(LONG)]
    first, last = sum(per_step[:WINDOW]) / WINDOW, sum(per_step[-WINDOW:]) / WINDOW
    assert last <= 1.5 * first, f"bytes per step: first {WINDOW} {first:.0f}, last {WINDOW} {last:.0f}"
    tracked = gp.git("ls-files", ".specd/tasks/t").splitlines()
    assert ".specd/tasks/t/events.jsonl" not in tracked  # only grows: kept out of git


def test_after_kill_9_a_clone_of_what_is_committed_resumes_and_finishes(tmp_path: Path) -> None:
    steps = 30
    gp = GitProject(tmp_path, steps=tuple(f"s{i}" for i in range(steps)))
    gp.new("t")
    ledger = gp.dir / "ledger.txt"  # the harness folder, which the jail shows (SPECD_JAIL_WRITE)
    agent = f"cmd:echo $SPECD_STEP >> {ledger}"
    proc = subprocess.Popen(gp.argv("continue", "t", "--auto", "--agent", agent), cwd=gp.root, env=gp.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if ledger.exists() and len(ledger.read_text().split()) >= 12:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run ended before the kill; the test proved nothing"
    ran_before = ledger.read_text().split()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(gp.root), str(clone)], check=True, capture_output=True)
    resumed = subprocess.run([sys.executable, "-m", "specd", "continue", "t", "--auto", "--agent", agent],
                             cwd=clone, env=gp.env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             timeout=600, check=False)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    ran = ledger.read_text().split()
    assert set(ran) == {f"s{i}" for i in range(steps)}  # every step ran
    # Only the steps after the last commit run again: the interrupted one, and the one finished just before
    # it (its completion is committed with the next step's start).
    assert len(ran) - steps <= 2, f"ran again: {sorted(set(s for s in ran_before if ran.count(s) > 1))}"
    status = subprocess.run([sys.executable, "-m", "specd", "status", "t", "--json"], cwd=clone, env=gp.env,
                            capture_output=True, text=True, check=False)
    assert status.returncode == 0, status.stderr
    assert '"COMPLETE"' in status.stdout
