"""Answers and cancels on Temporal, through the real CLI, a dev server and `specd worker` subprocesses: an answer
survives the worker that applied it, a cancel ends the task whenever it comes, and `status` says the same thing
in its listing and for one task."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from executor_harness import Repo
from temporal_harness import DevServer, TemporalExecutor


def branch_ledger(repo: Repo, task: str) -> list[str]:
    """The steps whose results the task's branch holds: the agent's ledger as committed."""
    text = repo.git("show", f"origin/specd/{task}:ledger-{task}.txt")
    return [line.split()[1] for line in text.splitlines() if line]


def test_a_worker_killed_just_after_an_answer_is_replaced_and_the_answer_is_used_once(
        tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("g")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        assert cluster.run("g", "--semi-auto").returncode == 3
        (repo.dir / "hold-g-s2").write_text("")
        answered = cluster.approve("g", "--note", "go")
        assert answered.returncode == 0, answered.stderr
        cluster.wait_held(["g-s2"])  # the answer is applied, its state pushed, and s2's agent runs
        cluster.close(signal.SIGKILL)
        (repo.dir / "hold-g-s2").unlink()
        cluster.start_workers()
        done = cluster.run("g")
        assert done.returncode == 0, done.stdout + done.stderr
        final = cluster.state("g")
        assert final["status"] == "COMPLETE"
        approvals = [row for row in final["checkpoints"] if row["answer"] == "approve"]
        assert [(row["note"], bool(row.get("id"))) for row in approvals] == [("go", True)], approvals
        assert branch_ledger(repo, "g") == ["s1", "s2", "s3"]
        logs = "\n".join(log.read_text(errors="replace") for log in cluster.logs)
        assert "not waiting for an answer" not in logs
    finally:
        cluster.close()


def test_a_cancel_during_a_step_ends_the_task_and_a_second_changes_nothing(
        repo: Repo, temporal_server: DevServer) -> None:
    repo.new("c")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        (repo.dir / "hold-c-s2").write_text("")
        cluster.submit("c", "--auto")
        cluster.wait_held(["c-s2"])
        first = repo.specd("cancel", "c", *cluster.flags())
        assert first.returncode == 0, first.stderr
        assert "CANCELLED" in first.stdout
        second = repo.specd("cancel", "c", *cluster.flags())
        assert second.returncode == 0, second.stderr
        assert "already ended (CANCELLED)" in second.stdout
        assert cluster.ended("c")["temporal"]["status"] == "CANCELLED"
        final = cluster.state("c")
        assert final["status"] == "CANCELLED"
        assert [row["answer"] for row in final["checkpoints"]] == ["cancel"]
        assert branch_ledger(repo, "c") == ["s1"]  # the cancelled step's result was never committed
        subjects = [s for s, _ in repo.branch_commits("c")]
        assert not any("ABORTED" in s for s in subjects), subjects
    finally:
        (repo.dir / "hold-c-s2").unlink(missing_ok=True)
        cluster.close()


def test_a_cancel_while_waiting_ends_the_task(tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("w")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        assert cluster.run("w", "--semi-auto").returncode == 3
        done = repo.specd("cancel", "w", *cluster.flags())
        assert done.returncode == 0, done.stderr
        assert cluster.ended("w")["temporal"]["status"] == "CANCELLED"
        assert cluster.state("w")["status"] == "CANCELLED"
    finally:
        cluster.close()


def test_status_agrees_in_the_listing_and_for_one_task_and_the_waiting_can_be_found(
        tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("t1")
    repo.new("t2")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        assert cluster.run("t1", "--semi-auto").returncode == 3
        one = cluster.view("t1")
        assert one["status"] == "WAITING_FOR_HUMAN"
        assert one["hint"] == "specd approve t1"
        for flags in ([], cluster.flags()):  # the clone's own record, or the flags, say where it runs
            listing = repo.specd("status", "--json", *flags)
            assert listing.returncode == 0, listing.stderr
            rows = {row["task"]: row for row in json.loads(listing.stdout)["tasks"]}
            assert rows["t1"]["status"] == "WAITING_FOR_HUMAN", rows["t1"]
            assert rows["t1"]["hint"] == "specd approve t1"
            assert rows["t2"]["status"] == "NOT_STARTED"
            table = repo.specd("status", *flags)
            assert table.returncode == 0, table.stderr
            assert "WAITING_FOR_HUMAN" in table.stdout
        found = subprocess.run([cluster.server.binary, "workflow", "list", "--address", cluster.server.address,
                                "--query", 'SpecdStatus="WAITING_FOR_HUMAN"'], capture_output=True, text=True,
                               check=False, timeout=60)
        assert found.returncode == 0, found.stderr
        assert one["temporal"]["workflow_id"] in found.stdout
        assert "specd approve t1 --temporal HOST:PORT" in memo(cluster, one["temporal"]["workflow_id"])["answer"]
    finally:
        cluster.close()


def memo(cluster: TemporalExecutor, workflow_id: str) -> dict[str, Any]:
    import asyncio

    from temporalio.client import Client

    from specd.executors.temporal.codec import converter

    async def read() -> dict[str, Any]:
        client = await Client.connect(cluster.server.address, data_converter=converter())
        return dict(await (await client.get_workflow_handle(workflow_id).describe()).memo())

    return asyncio.run(read())
