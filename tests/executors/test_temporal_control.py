"""Answers and cancels on Temporal, through the real CLI, a dev server and `specd worker` subprocesses: an answer
survives the worker that applied it, a cancel ends the task whenever it comes, and `status` says the same thing
in its listing and for one task."""

from __future__ import annotations

import json
import signal
import subprocess
import time
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


def test_two_answers_to_one_gate_never_answer_the_next_one_and_status_says_what_the_workflow_does(
        tmp_path: Path, temporal_server: DevServer) -> None:
    """Two people approve one gate while no worker has taken the first answer up (both saw it waiting): the
    second is refused, so the next gate still waits for a person. Meanwhile `status` tells the truth of the
    workflow: a step running on a worker is IN_PROGRESS (no process here runs it, yet it is not STOPPED), and
    a waiting task is answered by signals, never by `specd continue`, which refuses a task on Temporal."""
    repo = Repo(tmp_path, pause=("s2", "s3"))
    repo.new("g")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        assert cluster.run("g", "--semi-auto").returncode == 3
        waiting = cluster.view("g")
        assert (waiting["status"], waiting["hint"]) == ("WAITING_FOR_HUMAN", "specd approve g")
        assert "`specd skip g`" in waiting["reason"]
        assert "continue" not in waiting["reason"], waiting["reason"]
        said = memo(cluster, waiting["temporal"]["workflow_id"])["reason"]  # what Temporal's UI shows
        assert "`specd skip g`" in said
        assert "continue" not in said, said
        cluster.close()  # no worker: nothing takes an answer up, so the memo says waiting to both people
        (repo.dir / "hold-g-s2").write_text("")
        answered = cluster.approve("g", "--note", "first")
        assert answered.returncode == 0, answered.stderr
        second = cluster.approve("g", "--note", "second")  # refused: the first is in the workflow's history
        assert second.returncode == 2, second.stdout + second.stderr
        assert "was answered already (approve by" in second.stderr
        cluster.start_workers()
        cluster.wait_held(["g-s2"])
        running = cluster.view("g")  # the pushed copy still says waiting; the workflow took the answer
        assert (running["status"], running.get("idle"), running.get("hint")) == ("IN_PROGRESS", None, None)
        assert "runs on Temporal" in running["status_note"], running["status_note"]
        (repo.dir / "hold-g-s2").unlink()
        deadline = time.monotonic() + 120
        while (view := cluster.view("g"))["status"] != "WAITING_FOR_HUMAN" or view["next"]["step"] != "s3":
            assert time.monotonic() < deadline, f"g never waited at s3: {view['status']}"
            time.sleep(0.3)
        assert view["temporal"]["running"]
        assert [(row["step"], row["note"]) for row in cluster.state("g")["checkpoints"]
                if row["answer"] == "approve"] == [("s2", "first")]
        assert cluster.approve("g", "--note", "third").returncode == 0
        assert cluster.ended("g")["status"] == "COMPLETE"
        assert branch_ledger(repo, "g") == ["s1", "s2", "s3"]
    finally:
        (repo.dir / "hold-g-s2").unlink(missing_ok=True)
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
        # moved here, as the refusal's fix says (`specd run w --move`: the branch its workers pushed, in its
        # worktree), then started again from the gate it was cancelled at. From then on this copy is its truth:
        # status (one task and the listing) no longer shows Temporal's cancelled one
        moved = repo.specd("run", "w", "--move", "--semi-auto", "--agent", repo.agent())
        assert "moved w here from Temporal" in moved.stderr, moved.stdout + moved.stderr
        here = repo.specd("rerun", "w", "--from", "s2", "--semi-auto", "--agent", repo.agent())
        assert here.returncode == 3, here.stdout + here.stderr
        one = json.loads(repo.specd("status", "w", "--json").stdout)
        assert (one["status"], one.get("temporal")) == ("WAITING_FOR_HUMAN", None), one
        rows = {row["task"]: row for row in json.loads(repo.specd("status", "--json").stdout)["tasks"]}
        assert (rows["w"]["status"], rows["w"].get("temporal")) == ("WAITING_FOR_HUMAN", None), rows["w"]
        asked = cluster.view("w")  # asked for by flag: Temporal's copy, as before
        assert asked["temporal"]["status"] == "CANCELLED"
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


def test_the_page_shows_a_task_on_temporal_as_its_workflow_does_and_answers_it_with_a_signal(
        tmp_path: Path, temporal_server: DevServer) -> None:
    """The page's row of a task submitted to Temporal is what its workers pushed (not this clone's copy, which
    `specd new` left NOT_STARTED), offers no Run, and an answer given there is a signal to its workflow: the
    task goes on on a worker, and this clone's copy is never touched (it would be a second copy)."""
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    repo = Repo(tmp_path, pause="s2")
    repo.new("p")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        assert cluster.run("p", "--semi-auto").returncode == 3
        with TestClient(create_app(Project(repo.root), "tok"), base_url="http://127.0.0.1:8765") as page:
            auth = {"Authorization": "Bearer tok"}
            rows = {row["task"]: row for row in page.get("/tasks.json", headers=auth).json()["tasks"]}
            assert (rows["p"]["status"], rows["p"]["source"], rows["p"]["step"]) == (
                "WAITING_FOR_HUMAN", "temporal", "s2")
            # the list's first look also unpacked its copy, so a task's page never fetches on the server's loop
            assert (repo.root / ".specd" / ".cache" / "temporal" / "p" / ".specd" / "tasks" / "p").is_dir()
            one = page.get("/tasks/p.json", headers=auth).json()  # its page reads the copy its workers pushed
            assert one["view"]["status"] == "WAITING_FOR_HUMAN"
            assert [row["step"] for row in one["steps"]] == ["s1"]
            assert "`specd skip p`" in one["view"]["reason"]
            assert "continue" not in one["view"]["reason"]
            html = page.get("/", headers=auth).text
            assert "on Temporal" in html
            assert 'class="run"' not in html
            answered = page.post("/api/tasks/p/approve", headers=auth, json={"note": "from my phone", "by": "P <p@x>"})
            assert answered.status_code == 200, answered.text
            assert "Temporal" in answered.json()["next"]
            refused = page.post("/api/tasks/p/run", headers=auth, json={})
            assert refused.status_code == 400
            assert "runs on Temporal" in refused.json()["error"]["message"], refused.json()
        from specd.mcp_server import reading  # `specd mcp`'s reading tools say the same as the page

        listed, _ = reading.list_tasks(Project(repo.root), {})
        [row] = listed["tasks"]  # the workflow's word (this clone's copy says NOT_STARTED), wherever it is now
        assert row["temporal"]["workflow_id"].endswith("-p")
        assert row["status"] in ("WAITING_FOR_HUMAN", "IN_PROGRESS", "COMPLETE"), row
        assert cluster.ended("p")["status"] == "COMPLETE"
        one, text = reading.show_task(Project(repo.root), {"task": "p"})
        assert (one["status"], one["temporal"]["status"]) == ("COMPLETE", "COMPLETE")
        assert text.startswith("p  COMPLETE")
        checkpoints = cluster.state("p")["checkpoints"]
        approvals = [(row["note"], row["by"]) for row in checkpoints if row["answer"] == "approve"]
        assert approvals == [("from my phone", "P <p@x>")]
        assert not (repo.root / ".specd" / "tasks" / "p" / ".pipeline-state.json").exists()  # the copy here
        logs = repo.specd("logs", "p")  # its events are on the workers: said, not an empty answer
        assert logs.returncode == 0, logs.stderr
        assert "runs on Temporal" in logs.stderr
        landed = repo.specd("land", "p")  # its work comes back from the remote's branch, and so does its home
        assert landed.returncode == 0, landed.stdout + landed.stderr
        assert "landed p: specd/p merged into main" in landed.stdout
        assert repo.git("status", "--porcelain") == ""
        here = json.loads(repo.specd("status", "p", "--json").stdout)
        assert (here["status"], here.get("temporal")) == ("COMPLETE", None), here
    finally:
        cluster.close()
