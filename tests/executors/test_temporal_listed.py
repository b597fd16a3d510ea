"""What a clone sees of tasks on Temporal, and what it is told when it answers one. Real dev server, real workers.

- A listing and the task graph show tasks as their workers left them: statuses, who is ready, when. Before, the
  listing worked out `ready` and `waits for` from this clone's copies (never run here: NOT_STARTED) before putting
  the workers' rows in, and the graph read only this clone's copies.
- A second answer to the same wait is refused, as it is locally: the workflow keeps one answer a wait, and before,
  the second was "sent", exit 0, then dropped without a trace.
"""

from __future__ import annotations

import json
import subprocess
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


def test_a_second_answer_to_one_wait_is_refused_even_with_no_worker_running(tmp_path: Path,
                                                                           temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("g")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        waiting = cluster.run("g", "--semi-auto")
        assert waiting.returncode == 3, waiting.stdout + waiting.stderr
        cluster.close()  # no worker: the answers wait in the workflow's history
        first = repo.specd("approve", "g", "--note", "first", *cluster.flags())
        assert first.returncode == 0, first.stderr
        second = repo.specd("reject", "g", "--note", "second", *cluster.flags())
        assert second.returncode == 2, second.stdout + second.stderr
        assert "was answered already (approve by" in second.stderr
        # followed now, the workflow's memo still says waiting: the answer in its history says it goes on, so
        # `run --wait` follows it to its end instead of reporting WAITING_FOR_HUMAN (exit 3) at once
        follow = subprocess.Popen([*repo.specd_argv(), "run", "g", "--executor", "temporal", *cluster.flags(), "--wait",
                                   "--json", "--semi-auto", "--agent", repo.agent()],
                                  cwd=repo.root, env=repo.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        cluster.start_workers()  # the worker takes the first answer up, and the task goes on to its end
        out, err = follow.communicate(timeout=300)
        assert follow.returncode == 0, out + err
        summary = [json.loads(line) for line in out.splitlines() if '"summary"' in line]
        assert [row["status"] for row in summary] == ["COMPLETE"], out
        cluster.fetch()
        state = json.loads(repo.git("show", "origin/specd/g:.specd/tasks/g/.pipeline-state.json"))
        assert state["status"] == "COMPLETE"
        assert [(c["answer"], c["note"]) for c in state["checkpoints"]] == [("approve", "first")]
    finally:
        cluster.close()
