"""A listing and the task graph show tasks on Temporal as their workers left them: statuses, who is ready, when.

Before, the listing worked out `ready` and `waits for` from this clone's copies (never run here: NOT_STARTED)
before putting the workers' rows in, and the graph read only this clone's copies: a finished task's dependant
said it waited for it, and every node said NOT_STARTED. Real dev server, a real worker.
"""

from __future__ import annotations

import json
from pathlib import Path

from executor_harness import Repo
from temporal_harness import DevServer, TemporalExecutor


def test_a_listing_and_the_graph_follow_what_the_workers_pushed(tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, steps=("s1",))
    repo.new("w1")
    repo.new("w2", "w1")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        done = cluster.run("--all", "--auto")
        assert done.returncode == 0, done.stdout + done.stderr

        listed = repo.specd("status", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = {row["task"]: row for row in json.loads(listed.stdout)["tasks"]}
        assert {name: (row["status"], row["ready"], row["waits_for"]) for name, row in rows.items()} == {
            "w1": ("COMPLETE", True, []), "w2": ("COMPLETE", True, [])}
        assert all(row["updated_at"] for row in rows.values()), rows  # when the workers last saved each

        drawn = repo.specd("status", "--graph", "--json")
        assert drawn.returncode == 0, drawn.stderr
        assert [(node["task"], node["status"]) for node in json.loads(drawn.stdout)["graph"]] == [
            ("w1", "COMPLETE"), ("w2", "COMPLETE")]
    finally:
        cluster.close()
