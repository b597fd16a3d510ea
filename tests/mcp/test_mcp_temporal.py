"""`specd mcp` answers and cancels a task that runs on Temporal by a signal to its workflow, as `specd approve`
and `specd cancel` do, and refuses to start a second copy of it: a real dev server, real `specd worker`s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import Mcp, Repo  # puts tests/executors on the path, for the next
from temporal_harness import DevServer, TemporalExecutor


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    found = DevServer(tmp_path_factory.mktemp("temporal"))
    yield found
    found.stop()


def test_an_answer_and_a_cancel_from_mcp_reach_the_workflow(tmp_path: Path, server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("g")
    repo.new("w")
    cluster = TemporalExecutor(repo, server, workers=1)
    try:
        assert cluster.run("g", "--semi-auto").returncode == 3
        assert cluster.run("w", "--semi-auto").returncode == 3
        with Mcp(repo) as client:
            started, _ = client.refused("continue_task", task="g")
            approved = client.ok("approve", task="g", note="from my phone")
            cancelled = client.ok("cancel", task="w")
        assert "second copy" in started, started
        assert approved["answer"] == "approve"
        assert "sent to workflow" in approved["said"], approved
        assert "Temporal workers go on" in approved["next"], approved
        assert "cancelled workflow" in cancelled["said"], cancelled
        assert cluster.ended("g")["temporal"]["status"] == "COMPLETE"
        assert cluster.ended("w")["temporal"]["status"] == "CANCELLED"
        state = cluster.state("g")
        assert state["status"] == "COMPLETE"
        answer = state["checkpoints"][-1]
        assert (answer["answer"], answer["note"]) == ("approve", "from my phone")
        assert "Traceback" not in (repo.dir / "mcp-stderr.txt").read_text()
    finally:
        cluster.close()
