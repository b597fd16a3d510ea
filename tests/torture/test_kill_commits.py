"""Finished means committed, and no orphan: kill -9 of `specd continue` and of `specd run --all -j 4` at commits
and at random moments, restart, repeat until COMPLETE.

Each invocation is killed either by the `git` in front of the real one (see ``kill_harness``), at a seeded
choice of commit (a step's `complete` commit or the `run state COMPLETE` one) before or after the real commit
is made, or by the test after a seeded random delay. After a kill nothing is cleaned up by the test: the
next run must stop what the killed one left, and every commit of the next run checks that no process of an
earlier invocation is alive. When a task completes: every step has exactly one commit of its own holding its
file (and no other commit holds it), the task's branch ends with `run state COMPLETE`, its tree is clean.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
from pathlib import Path

from kill_harness import KillProject, kill_marked
from torture_size import size

CONTINUE_KILLS, RUN_KILLS = size(12, 200), size(6, 100)  # killed invocations over the whole test
KILLS_PER_TRIAL = 4  # then the trial's last invocation runs to the end
TIMEOUT = 180.0  # a safety net only: a hang fails the test


def plan(rng: random.Random, commits: int) -> tuple[str, float | None]:
    """A kill at one of the first ``commits`` step/final commits (before or after it), or after a delay."""
    if rng.random() < 0.6:
        return f"{rng.randint(1, commits)}:{rng.choice(('before', 'after'))}", None
    return "", rng.uniform(0.3, 2.5)


def invoke(kp: KillProject, number: int, rng: random.Random, commits: int, last: bool, *args: str) -> int | None:
    """One invocation; the exit code, or None when it was killed."""
    at, delay = ("", None) if last else plan(rng, commits)
    proc = kp.start(number, at, *args)
    try:
        proc.wait(timeout=TIMEOUT if delay is None else delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    try:
        proc.wait(timeout=TIMEOUT)
    finally:
        stderr = proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    if proc.returncode == -signal.SIGKILL:
        return None
    assert proc.returncode == 0, f"invocation {number} ended {proc.returncode}: {stderr}"
    return 0


def trials(tmp: Path, wanted: int, tasks: tuple[str, ...], args: tuple[str, ...], commits: int) -> dict[str, int]:
    figures = {"trials": 0, "kills": 0, "at_commits": 0, "invocations": 0}
    number = 0
    while figures["kills"] < wanted:
        session = f"s{random.getrandbits(40):x}"
        # every other trial outside the jail (`sandbox: false`): no PID namespace, the keeper alone
        kp = KillProject(tmp / f"trial{figures['trials']}", tasks, session, jailed=figures["trials"] % 2 == 0)
        rng = random.Random(7000 + figures["trials"])
        try:
            for attempt in range(KILLS_PER_TRIAL + 1):
                number += 1
                figures["invocations"] += 1
                code = invoke(kp, number, rng, commits, attempt == KILLS_PER_TRIAL, *args)
                if code is None:
                    figures["kills"] += 1
                    continue
                break
            for task in tasks:
                state = json.loads((kp.root / tree_of(task, tasks) / ".specd/tasks" / task /
                                    ".pipeline-state.json").read_text(encoding="utf-8"))
                assert state["status"] == "COMPLETE", f"trial {figures['trials']}: {task} {state['status']}"
                kp.check_task(task, kp.root / tree_of(task, tasks))
            assert kp.git("status", "--porcelain") == ""  # the main tree too
            assert kp.violations() == [], "\n".join(kp.violations())
            figures["at_commits"] += kp.kills_at_commits()
        finally:
            kill_marked(session)
        figures["trials"] += 1
    return figures


def tree_of(task: str, tasks: tuple[str, ...]) -> str:
    return "." if len(tasks) == 1 else f".specd/worktrees/{task}"


def test_kill_9_of_continue_at_commits_and_at_random_leaves_every_step_committed_and_no_orphan(tmp_path: Path) -> None:
    figures = trials(tmp_path, CONTINUE_KILLS, ("t",), ("continue", "t"), commits=5)
    print(f"\nkill trials (continue): {figures}")  # noqa: T201
    assert figures["at_commits"] >= 1, "no kill landed at a commit; the test proved little"


def test_kill_9_of_run_all_j4_leaves_every_tasks_branch_committed_and_no_orphan(tmp_path: Path) -> None:
    tasks = ("t1", "t2", "t3", "t4")
    figures = trials(tmp_path, RUN_KILLS, tasks, ("run", "--all", "-j", "4"), commits=20)
    print(f"\nkill trials (run --all -j 4): {figures}")  # noqa: T201
    assert figures["at_commits"] >= 1, "no kill landed at a commit; the test proved little"
