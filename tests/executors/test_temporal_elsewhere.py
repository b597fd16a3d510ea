"""A task another clone submitted to Temporal is not run here as a second copy.

Clone A commits a task, pushes it and submits it to Temporal; its workflow waits at a gate. Clone B pulled the
same main branch: the task is there, never run, and B's records say nothing of it (they are per clone). With the
project's Temporal named (here by SPECD_TEMPORAL_*, as a shared `.specd/config.json` would), B asks it before the
task's first run: `specd continue`, `specd run TASK` and `specd run --all` leave the task to its workflow, and say
how to answer it or bring it here. Found by hand: B ran it from its first step, a second copy of A's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from executor_harness import Repo
from temporal_harness import DevServer, TemporalExecutor, free_port


def test_a_task_another_clone_submitted_is_left_to_its_workflow(tmp_path: Path, temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("g")
    repo.new("mine")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "tasks g and mine")
    cluster = TemporalExecutor(repo, temporal_server)  # pushes main, tasks included, to the shared remote
    try:
        assert cluster.run("g", "--semi-auto").returncode == 3  # its workflow waits at the gate before s2
        other = tmp_path / "other"
        subprocess.run(["git", "clone", "-q", str(cluster.remote), str(other)], check=True, env=repo.env)
        env = {**repo.env, "SPECD_TEMPORAL_ADDRESS": temporal_server.address,
               "SPECD_TEMPORAL_TASK_QUEUE": cluster.queue}
        state = other / ".specd" / "tasks" / "g" / ".pipeline-state.json"

        def specd(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*repo.specd_argv(), *args], cwd=other, env=env, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=300, check=False)

        went = specd("continue", "g", "--auto", "--agent", repo.agent())
        assert went.returncode == 2, went.stdout + went.stderr
        assert "task 'g' runs on Temporal" in went.stderr
        assert "submitted from another clone" in went.stderr
        assert "specd status g" in went.stderr  # what to do instead
        assert "specd run g --move" in went.stderr
        assert not state.exists()  # nothing ran here, and no home was recorded for it
        assert not (other / ".specd" / "homes" / "g.json").exists()

        named = specd("run", "g", "--auto", "--agent", repo.agent())
        assert named.returncode == 2, named.stdout + named.stderr
        assert "runs on Temporal" in named.stdout + named.stderr
        assert not (other / ".specd" / "worktrees" / "g").exists()

        every = specd("run", "--all", "--auto", "--agent", repo.agent())  # mine runs; g is left to its workflow
        assert every.returncode == 0, every.stdout + every.stderr
        assert "g: runs on Temporal" in every.stdout + every.stderr
        assert not (other / ".specd" / "worktrees" / "g").exists()
        assert (other / ".specd" / "worktrees" / "mine" / "out-mine-s3.txt").exists()
        assert cluster.state("g")["status"] == "WAITING_FOR_HUMAN"  # the workflow's copy, untouched

        # the printed fix, followed from this clone: the workflow cancelled, the task brought here with its s1
        cancelled = specd("cancel", "g")
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        moved = specd("run", "g", "--move", "--auto", "--agent", repo.agent())
        assert moved.returncode == 4, moved.stdout + moved.stderr  # here, CANCELLED as it ended there: its own code
        assert "g: moved g here from Temporal" in moved.stderr
        tree = other / ".specd" / "worktrees" / "g"
        assert (tree / "out-g-s1.txt").exists()  # what its workers finished, brought with its branch
        assert not (tree / "out-g-s2.txt").exists()  # nothing runs as it moves: it ended CANCELLED there
        again = specd("rerun", "g", "--from", "s2", "--auto", "--agent", repo.agent())
        assert again.returncode == 0, again.stdout + again.stderr
        ledger = (tree / "ledger-g.txt").read_text().split("\n")
        assert [line.split()[1] for line in ledger if line] == ["s1", "s2", "s3"]  # s1 by its workers, once
    finally:
        cluster.close()


def test_a_worker_whose_environment_names_temporal_runs_the_task_it_was_given(tmp_path: Path,
                                                                             temporal_server: DevServer) -> None:
    """The run a worker starts for a step is a first run in the worker's own clone, and the workflow that asked for it
    runs: that is the task's one copy, not another clone's, so it is never refused there."""
    repo = Repo(tmp_path)
    repo.new("n")  # not committed: its folder goes to the remote with its submission, as usual
    cluster = TemporalExecutor(repo, temporal_server)
    try:
        cluster.close()
        cluster.start_workers({"SPECD_TEMPORAL_ADDRESS": temporal_server.address,
                               "SPECD_TEMPORAL_TASK_QUEUE": cluster.queue})
        done = cluster.run("n")
        assert done.returncode == 0, done.stdout + done.stderr
        assert cluster.state("n")["status"] == "COMPLETE"
    finally:
        cluster.close()


def test_a_temporal_that_cannot_be_asked_does_not_stop_a_first_run_here(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.new("t")
    nobody = f"127.0.0.1:{free_port()}"  # nothing listens there: the connection is refused at once
    went = repo.specd("continue", "t", "--auto", "--agent", repo.agent(), env={"SPECD_TEMPORAL_ADDRESS": nobody})
    assert went.returncode == 0, went.stdout + went.stderr
    assert f"could not ask Temporal at {nobody} whether another clone submitted t" in went.stderr
    assert (repo.root / "out-t-s3.txt").exists()  # it ran here, every step
