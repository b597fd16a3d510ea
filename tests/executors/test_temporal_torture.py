"""Temporal workers killed at random moments, and one frozen past its heartbeat: every task completes or is
cancelled as asked, no step's result is used twice, no superseded attempt pushes a commit, no task is stuck.

Each round submits two tasks to two workers (semi-auto: every task stops at the gate before s2), answers both,
cancels one while its s2 is held, and SIGKILLs one worker or both at a random moment around the answers and the
cancel; killed workers start again on their own folders. What each task's branch holds is read from the shared
remote: the command agent's ledger as committed (one line per step whose result was used) and the commits.
Rounds: a few in CI; SPECD_TORTURE=large runs 50 (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from executor_harness import TIMEOUT, Repo
from temporal_harness import DevServer, TemporalExecutor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "torture"))
from torture_size import size  # noqa: E402

SEED = int(os.environ.get("SPECD_TORTURE_SEED", "29"))


def states(cluster: TemporalExecutor, tasks: list[str]) -> dict[str, dict[str, Any]]:
    """Each task's workflow as `specd status` reads it (running, status)."""
    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key
    from specd.executors.temporal.settings import Settings

    async def read() -> dict[str, dict[str, Any]]:
        client = await lookup.connect(Settings(address=cluster.server.address))
        key = repo_key(cluster.repo.root)
        return {task: await lookup.state(client, key, task) or {"running": True, "status": "SUBMITTED"}
                for task in tasks}

    return asyncio.run(read())


def cancel(cluster: TemporalExecutor, task: str) -> None:
    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key
    from specd.executors.temporal.settings import Settings

    async def send() -> None:
        client = await lookup.connect(Settings(address=cluster.server.address))
        await lookup.handle(client, repo_key(cluster.repo.root), task).signal("cancel", {"by": "torture"})

    asyncio.run(send())


def until_all(cluster: TemporalExecutor, tasks: list[str], done: Any, what: str) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        now = states(cluster, tasks)
        if all(done(found) for found in now.values()):
            return now
        assert time.monotonic() < deadline, f"{what}: {now}"
        time.sleep(0.3)


def branch(repo: Repo, task: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """The task's pushed run state, the steps its committed ledger holds, and its commits' subjects."""
    state = json.loads(repo.git("show", f"origin/specd/{task}:.specd/tasks/{task}/.pipeline-state.json"))
    shown = subprocess.run(["git", "show", f"origin/specd/{task}:ledger-{task}.txt"], cwd=repo.root,
                           capture_output=True, text=True, check=False)
    ledger = [line.split()[1] for line in shown.stdout.splitlines() if line]
    return state, ledger, [subject for subject, _ in repo.branch_commits(task)]


def no_result_twice(task: str, ledger: list[str], subjects: list[str]) -> None:
    assert not [s for s, n in Counter(ledger).items() if n > 1], (task, ledger)
    finished = [s for s in subjects if s.endswith(" complete")]
    assert len(finished) == len(set(finished)), (task, subjects)
    assert not [s for s in subjects if "ABORTED" in s], (task, subjects)  # a stopped attempt pushed nothing


def test_workers_killed_at_random_moments(tmp_path: Path, temporal_server: DevServer) -> None:
    rng = random.Random(SEED)
    repo = Repo(tmp_path, pause="s2")
    repo.env["AGENT_SLEEP"] = "0.3"
    rounds = size(2, 50)
    for i in range(rounds):
        repo.new(f"x{i}")
        repo.new(f"c{i}")
    cluster = TemporalExecutor(repo, temporal_server, workers=2, mode="semi-auto")
    kills = stopped = 0
    try:
        for i in range(rounds):
            x, c = f"x{i}", f"c{i}"
            cluster.submit(x, c, "--semi-auto")
            until_all(cluster, [x, c], lambda f: f["status"] == "WAITING_FOR_HUMAN", "never reached the gate")
            (repo.dir / f"hold-{c}-s2").write_text("")
            for task in (c, x):
                answered = cluster.approve(task)
                assert answered.returncode == 0, answered.stderr
            time.sleep(rng.uniform(0, 1.0))  # right after the answers, or once s2 runs
            cancel(cluster, c)  # what `specd cancel` sends (test_temporal_control.py), here at once
            time.sleep(rng.uniform(0, 1.0))  # while the cancel stops c's step, or after
            for number in rng.choice([[0], [1], [0, 1]]):
                cluster.kill9(number)
                kills += 1
            (repo.dir / f"hold-{c}-s2").unlink()
            ended = until_all(cluster, [x, c], lambda f: not f["running"], f"round {i}: a task is stuck")
            assert ended[x]["status"] == "COMPLETE", (i, ended)
            assert ended[c]["status"] == "CANCELLED", (i, ended)
            cluster.fetch()
            for task, final, steps in ((x, "COMPLETE", ["s1", "s2", "s3"]), (c, "CANCELLED", ["s1"])):
                state, ledger, subjects = branch(repo, task)
                assert state["status"] == final, (i, task, state["status"], state.get("reason"))
                # a cancel stops the held s2, unless a kill held back the workflow's move until s2 had finished
                assert ledger == steps if task == x else ledger in (["s1"], ["s1", "s2"], ["s1", "s2", "s3"]), \
                    (i, task, ledger)
                stopped += task == c and ledger == steps
                no_result_twice(task, ledger, subjects)
                approvals = [row for row in state["checkpoints"] if row["answer"] == "approve"]
                assert len(approvals) <= 1, (i, task, approvals)  # the answer is recorded once
            assert [row for row in branch(repo, x)[0]["checkpoints"] if row["answer"] == "approve"]
    finally:
        cluster.close()
        print(f"temporal torture: {rounds} rounds, {kills} worker kills, {stopped} cancels that stopped the "
              f"step they came in, seed {SEED}")


def tree(pid: int) -> list[int]:
    """``pid`` and every process descending from it (a worker, its `specd continue` children, their agents)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(parents.get(found[-1], []))
    return found


def test_a_worker_frozen_past_its_heartbeat_pushes_nothing_when_it_wakes(
        tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path)
    repo.new("f")
    cluster = TemporalExecutor(repo, temporal_server, workers=2)
    frozen: list[int] = []
    try:
        (repo.dir / "hold-f-s2").write_text("")
        cluster.submit("f", "--auto")
        cluster.wait_held(["f-s2"])
        victim = next(i for i in range(2) if list((cluster.workdir / f"w{i}").glob("*/f/held-f-s2")))
        other = cluster.workdir / f"w{1 - victim}"
        frozen = tree(cluster.workers[victim].pid)
        for pid in frozen:  # a paused machine: the worker, its step's child and the agent stop together
            with contextlib.suppress(ProcessLookupError):  # one that ended since it was listed
                os.kill(pid, signal.SIGSTOP)
        deadline = time.monotonic() + TIMEOUT
        while not list(other.glob("*/f/held-f-s2")):  # Temporal gave the step to the other worker
            assert time.monotonic() < deadline, "the step never moved to the other worker"
            time.sleep(0.2)
        (repo.dir / "hold-f-s2").unlink()  # the frozen agent, too, finishes its step once it wakes
        until_all(cluster, ["f"], lambda found: not found["running"], "the task is stuck")
        cluster.fetch()
        tip = repo.git("rev-parse", "origin/specd/f").strip()
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        frozen = []
        leases = cluster.workdir / f"w{victim}" / ".leases"
        while list(leases.glob("lease-*")):  # the woken attempt ran to its end (its lease is removed then)
            assert time.monotonic() < deadline, "the woken attempt never ended"
            time.sleep(0.2)
        cluster.fetch()
        assert repo.git("rev-parse", "origin/specd/f").strip() == tip  # it pushed nothing
        woken = next((cluster.workdir / f"w{victim}").glob("*/f"))
        # what it committed when it woke (its step, or ABORTED) stayed in its own clone; its clone may since have
        # been reset to the remote's branch (a later step's activity, handed to it while it was frozen, ran there)
        pushed = set(repo.git("rev-list", "origin/specd/f").split())
        entries = [line.split(" ", 1) for line in repo.git("reflog", "--format=%H %gs", cwd=woken).splitlines()]
        made = [(sha, what) for sha, what in entries if what.startswith("commit") and sha not in pushed]
        assert made, entries
        assert all(what.startswith("commit: docs(f): ") for _, what in made), made
        state, ledger, subjects = branch(repo, "f")
        assert state["status"] == "COMPLETE"
        assert ledger == ["s1", "s2", "s3"]
        no_result_twice("f", ledger, subjects)
    finally:
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        (repo.dir / "hold-f-s2").unlink(missing_ok=True)
        cluster.close()
