"""An attacker who reaches the Temporal server (localhost:7233 asks for no credentials) starts jobs on the workers'
task queue with the temporalio client: an agent of its own, a mode that is a flag, a key and a task that climb out
of the work folder. The worker refuses each one, naming the field: nothing runs, nothing is cloned or pushed, and
a sibling repository outside the work folder keeps its uncommitted edit. Real dev server, real `specd worker`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from executor_harness import TIMEOUT, Repo
from temporal_harness import DevServer, TemporalExecutor

PWN = "cmd:env > pwned.txt"  # the worker's secrets in a file its step would commit and push


@pytest.fixture
def cluster(repo: Repo, temporal_server: DevServer) -> Iterator[TemporalExecutor]:
    repo.new("a")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "task a")
    made = TemporalExecutor(repo, temporal_server, workers=1)
    repo.git("push", "-q", "origin", "main:specd/a")  # the task's branch on the remote, as `specd run` seeds it
    yield made
    made.close()


def attack(cluster: TemporalExecutor, jobs: list[dict[str, Any]]) -> list[str]:
    """Start each job as its own workflow, as anyone can; how each ended (the failure's message)."""
    from temporalio.client import Client, WorkflowFailureError
    from temporalio.exceptions import ApplicationError

    async def go() -> list[str]:
        client = await Client.connect(cluster.server.address)
        handles = [await client.start_workflow("specd-task", job, id=f"attack-{cluster.queue}-{i}",
                                               task_queue=cluster.queue) for i, job in enumerate(jobs)]
        ended = []
        for handle in handles:
            try:
                ended.append(f"completed: {await asyncio.wait_for(handle.result(), TIMEOUT)}")
            except WorkflowFailureError as exc:
                ended.append(exc.cause.message if isinstance(exc.cause, ApplicationError) else repr(exc.cause))
        return ended

    return asyncio.run(go())


def key_of(repo: Repo) -> str:
    return repo.git("rev-list", "--max-parents=0", "HEAD").split()[0][:12]


def victim(cluster: TemporalExecutor) -> Path:
    """A clone beside the worker's work folder, where ``key: ../victim`` would put task a's clone, with an edit
    of its owner's that `checkout --force` and `clean -fd` would wipe."""
    path = cluster.workdir / "victim" / "a"
    cluster.repo.git("clone", "-q", str(cluster.remote), str(path), cwd=cluster.repo.root)
    (path / "README.md").write_text("# my unsaved work\n")
    (path / "mine.txt").write_text("not committed yet\n")
    return path


def assert_nothing_done(cluster: TemporalExecutor, tip: str) -> None:
    work = cluster.workdir / "w0"
    assert list(work.iterdir()) == []  # no clone, no folder: nothing was made for any of the jobs
    assert not list(cluster.workdir.rglob("pwned.txt"))
    assert cluster.repo.git("ls-remote", str(cluster.remote), "specd/a").split()[0] == tip  # nothing pushed
    log = cluster.logs[-1].read_text(errors="replace")
    assert log.count("refused a job") >= 1, log
    assert "Traceback" not in log


def test_a_job_that_brings_its_own_agent_or_mode_is_refused_and_runs_nothing(cluster: TemporalExecutor) -> None:
    key, tip = key_of(cluster.repo), cluster.repo.git("rev-parse", "main").strip()
    ended = attack(cluster, [{"task": "a", "key": key, "agent": PWN},
                             {"task": "a", "key": key, "mode": "agent=cmd:env > pwned.txt"},  # once `--agent=...`
                             {"task": "a", "key": key, "mode": "--no-sandbox"},
                             {"task": "a", "key": key, "mode": "auto --agent cmd:x"}])
    assert ended[0].startswith("the worker refused this job: field agent: this job asks for agent 'cmd:env > pw")
    for said in ended[1:]:
        assert said.startswith("the worker refused this job: field mode: this job asks for mode"), said
        assert "this worker runs with --auto" in said
    assert_nothing_done(cluster, tip)


def test_a_job_whose_key_or_task_climbs_out_of_the_work_folder_is_refused(cluster: TemporalExecutor) -> None:
    key, tip = key_of(cluster.repo), cluster.repo.git("rev-parse", "main").strip()
    theirs = victim(cluster)
    before = cluster.repo.git("status", "--porcelain", "--branch", cwd=theirs)
    ended = attack(cluster, [{"task": "a", "key": "../victim"},
                             {"task": "../x", "key": key},
                             {"task": "../../victim/a", "key": key},
                             {"task": "a", "key": key, "heartbeat_timeout": "soon"}])
    assert ended[0].startswith("the worker refused this job: field key: '../victim' is not a repository key"), ended
    assert ended[1].startswith("the worker refused this job: field task: '../x' is not a valid task name"), ended
    assert "field task: '../../victim/a' is not a valid task name" in ended[2]
    assert "field heartbeat_timeout: 'soon' is not a number of seconds" in ended[3]
    assert cluster.repo.git("status", "--porcelain", "--branch", cwd=theirs) == before
    assert (theirs / "README.md").read_text() == "# my unsaved work\n"
    assert (theirs / "mine.txt").exists()
    assert_nothing_done(cluster, tip)


def test_a_submit_asking_for_another_agent_is_blocked_saying_why_then_runs_once_fixed(
        cluster: TemporalExecutor) -> None:
    repo = cluster.repo
    asked = repo.specd("run", "a", "--executor", "temporal", *cluster.flags(), "--agent", "cmd:true", "--wait",
                       "--json")
    assert asked.returncode == 1, asked.stdout + asked.stderr
    row = next(r for r in map(json.loads, asked.stdout.splitlines()) if r["kind"] == "summary")
    assert row["status"] == "BLOCKED"
    assert "field agent: this job asks for agent 'cmd:true'" in row["reason"]
    assert not cluster.clones()
    again = repo.specd("run", "a", "--executor", "temporal", *cluster.flags(), "--wait")  # the worker's own agent
    assert again.returncode == 0, again.stdout + again.stderr
    assert cluster.status("a") == "COMPLETE"
