"""One Temporal activity per step, named after it: the workflow's history lists the pipeline in order, a gate in
the middle holds between two steps' activities, and each step still runs once. Real dev server, real workers."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from executor_harness import Repo, assert_clean_branches
from temporal_harness import DevServer, TemporalExecutor
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from test_temporal import workflow_of

from specd.executors.temporal.steps import label
from specd.executors.temporal.workflow import TaskWorkflow


def events(server: DevServer, workflow_id: str) -> list[dict[str, Any]]:
    history = json.loads(server.history(workflow_id))
    found: list[dict[str, Any]] = history.get("events", []) if isinstance(history, dict) else history
    return found


def jobs(server: DevServer, workflow_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Each activity the workflow scheduled, in order, and the job it was given."""
    return [(scheduled["activityType"]["name"], json.loads(base64.b64decode(scheduled["input"]["payloads"][0]["data"])))
            for event in events(server, workflow_id)
            if (scheduled := event.get("activityTaskScheduledEventAttributes"))]


def scheduled(server: DevServer, workflow_id: str) -> list[str]:
    """The type of every activity the workflow scheduled, in order."""
    return [name for name, _ in jobs(server, workflow_id)]


def attempts(server: DevServer, workflow_id: str) -> list[int]:
    """The attempt that ended each activity the workflow ran (1: it never had to run again)."""
    return [int(started["attempt"]) for event in events(server, workflow_id)
            if (started := event.get("activityTaskStartedEventAttributes"))]


def test_each_step_is_an_activity_named_after_it_in_order(repo: Repo, temporal_server: DevServer) -> None:
    """A task made with `specd new` and not committed (the usual case): the submitter pushes its folder as these
    files have it, and names the first step itself. One committed on HEAD (whose files here may differ from what
    is pushed) has its first step named by `specd_next`, from the remote's branch."""
    repo.new("p")
    repo.new("q")
    repo.git("add", ".specd/tasks/q")
    repo.git("commit", "-q", "-m", "q, committed before it is submitted")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        done = cluster.run("p", "q", "--auto")
        assert done.returncode == 0, done.stdout + done.stderr
        assert scheduled(temporal_server, workflow_of(repo, "p")) == ["s1", "s2", "s3"]
        assert scheduled(temporal_server, workflow_of(repo, "q")) == ["specd_next", "s1", "s2", "s3"]
        assert_clean_branches(repo, ["p", "q"])
        assert Counter((t, s) for t, s, _, _ in repo.ledger()) == Counter(
            {(t, s): 1 for t in ("p", "q") for s in repo.steps})
    finally:
        cluster.close()


def _waiting_at_s2(tmp_path: Path, server: DevServer, workers: int) -> tuple[Repo, TemporalExecutor]:
    """Task g submitted in semi-auto, its s1 done, waiting at s2's gate."""
    repo = Repo(tmp_path, pause="s2")
    repo.new("g")
    cluster = TemporalExecutor(repo, server, workers=workers)
    waiting = cluster.run("g", "--semi-auto")
    if waiting.returncode != 3:
        cluster.close()
    assert waiting.returncode == 3, waiting.stdout + waiting.stderr
    return repo, cluster


def test_a_gate_between_two_steps_holds_then_the_next_steps_activity_runs(tmp_path: Path,
                                                                         temporal_server: DevServer) -> None:
    repo, cluster = _waiting_at_s2(tmp_path, temporal_server, workers=2)
    try:
        # s1 ran, and its activity asked s2's gate: nothing of s2 was scheduled yet
        assert scheduled(temporal_server, workflow_of(repo, "g")) == ["s1"]
        answered = cluster.approve("g")
        assert answered.returncode == 0, answered.stdout + answered.stderr
        done = cluster.run("g")
        assert done.returncode == 0, done.stdout + done.stderr
        assert cluster.status("g") == "COMPLETE"
        # the answer names the step it leads to (specd_next), then that step's activity and the last one's
        assert scheduled(temporal_server, workflow_of(repo, "g")) == ["s1", "specd_next", "s2", "s3"]
        assert_clean_branches(repo, ["g"])
        assert Counter((t, s) for t, s, _, _ in repo.ledger()) == Counter({("g", s): 1 for s in repo.steps})
    finally:
        cluster.close()


def test_a_phase_step_is_named_with_its_phase() -> None:
    assert label({"step": "execute", "pipeline": "phase", "phase": "01"}) == "phase 01 · execute"
    assert label({"step": "discuss", "pipeline": "main", "phase": None}) == "discuss"
    assert label(None) is None
    assert label({"step": ""}) is None


def test_specd_steps_stops_a_run_in_progress_after_one_step_naming_the_next(tmp_path: Path) -> None:
    """What a step's activity runs: `specd continue --json` with SPECD_STEPS=1, with no Temporal around it."""
    repo = Repo(tmp_path, pause="s3")
    repo.new("t")
    seen: list[tuple[str, Any]] = []
    for _ in range(3):
        done = repo.specd("continue", "t", "--json", "--semi-auto", "--agent", repo.agent(), env={"SPECD_STEPS": "1"})
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        finished = [e for e in events if e.get("kind") == "run_finished"]
        assert len(finished) == 1, done.stdout + done.stderr
        seen.append((finished[0]["status"], label(finished[0].get("next"))))
        if finished[0]["status"] != "IN_PROGRESS":
            break
        assert done.returncode == 0, done.stdout + done.stderr
    # s1's run stops naming s2; s2's run, once s2 is done, enters s3 and asks its gate: it waits, s3 not run
    assert seen == [("IN_PROGRESS", "s2"), ("WAITING_FOR_HUMAN", None)]
    ledger = (repo.root / "ledger-t.txt").read_text().split("\n")
    assert [line.split()[1] for line in ledger if line] == ["s1", "s2"]
    assert repo.specd("approve", "t").returncode == 0
    done = repo.specd("continue", "t", "--json", "--semi-auto", "--agent", repo.agent(), env={"SPECD_STEPS": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"status": "COMPLETE"' in done.stdout.splitlines()[-1], done.stdout
    assert [line.split()[1] for line in (repo.root / "ledger-t.txt").read_text().splitlines()] == ["s1", "s2", "s3"]


def test_a_workflow_started_by_an_older_specd_replays_on_its_one_specd_run_activity() -> None:
    """Histories recorded from the workflow before one activity per step (fcd5cf5), with a `specd_run` that
    stopped at a gate, then, answered, completed: the workflow today replays both without nondeterminism, so a
    worker upgraded under a running (or waiting) task goes on with it."""
    runner = SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("specd"))
    replayer = Replayer(workflows=[TaskWorkflow], workflow_runner=runner)
    for name in ("waiting", "complete"):
        text = (Path(__file__).parent / "data" / f"temporal-specd-run-{name}.json").read_text(encoding="utf-8")
        history = WorkflowHistory.from_json(f"specd-0123456789ab-g-{name}", text)
        asyncio.run(replayer.replay_workflow(history))  # raises on nondeterminism


def test_a_push_to_the_task_branch_while_it_waits_at_a_gate_is_what_the_next_step_starts_from(
        tmp_path: Path, temporal_server: DevServer) -> None:
    """Between two steps a worker checks its clone against the commit the last step pushed, without asking the
    remote; after a gate the remote is asked again (where the answer leads is read on its branch, and the step
    after it is told no commit), because a person may have pushed the branch while the task waited (an edited
    plan, then `specd approve`). That push is what the next step runs on, and stays on the branch."""
    repo, cluster = _waiting_at_s2(tmp_path, temporal_server, workers=1)
    try:
        person = tmp_path / "person"
        subprocess.run(["git", "clone", "-q", "-b", "specd/g", str(cluster.remote), str(person)], check=True)
        (person / "by-a-person.txt").write_text("edited while the task waited at s2's gate\n")
        for args in (("add", "by-a-person.txt"),
                     ("-c", "user.name=P", "-c", "user.email=p@x", "commit", "-q", "-m", "a person's edit"),
                     ("push", "-q", "origin", "specd/g")):
            subprocess.run(["git", *args], cwd=person, check=True, capture_output=True)
        answered = cluster.approve("g")
        assert answered.returncode == 0, answered.stdout + answered.stderr
        done = cluster.run("g")
        assert done.returncode == 0, done.stdout + done.stderr
        assert cluster.status("g") == "COMPLETE"
        cluster.fetch()
        subjects = repo.git("log", "--format=%s", "origin/specd/g").splitlines()
        assert "a person's edit" in subjects
        assert subjects.index("a person's edit") > subjects.index("docs(g): s2 complete")  # the steps came after
        [clone] = cluster.clones()
        assert (clone / "by-a-person.txt").exists()
        # the step after the gate was told no commit (its clone asks the remote); the step after it was told
        # the commit s2's push left: a worker whose clone sat at s1's commit would otherwise take it for current
        heads = {name: job.get("head") for name, job in jobs(temporal_server, workflow_of(repo, "g"))}
        assert heads["s2"] is None
        commits = dict(line.split(" ", 1)[::-1] for line in repo.git("log", "--format=%H %s", "origin/specd/g")
                       .splitlines())
        assert heads["s3"] == commits["docs(g): s2 complete"]
        assert attempts(temporal_server, workflow_of(repo, "g")) == [1, 1, 1, 1]
    finally:
        cluster.close()
