"""Moving a task between this machine and Temporal, through the real CLI, a dev server and `specd worker`s: the
printed fixes followed step by step, and the task's history kept both ways (no step it finished runs again, one
copy at a time).

Bringing a task back from Temporal used to start it again from its first step, in a second copy, when its home
record was deleted as the fix said; moving a task that ran steps here to Temporal was refused whatever was done.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from executor_harness import TIMEOUT, Repo
from temporal_harness import DevServer, TemporalExecutor


def _home(repo: Repo, task: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.root / ".specd" / "homes" / f"{task}.json").read_text())
    return data


def _ledger(text: str) -> list[str]:
    return [line.split()[1] for line in text.splitlines() if line]


def _status(repo: Repo, task: str) -> dict[str, Any]:
    done = repo.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _said(done: subprocess.CompletedProcess[str]) -> str:
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    return said


def _fix(done: subprocess.CompletedProcess[str], pattern: str) -> list[str]:
    """The command a refusal's fix names, as argv for `specd` (the test runs it as printed)."""
    found = re.search(pattern, _said(done))
    assert found is not None, (pattern, _said(done))
    argv = shlex.split(found.group(1))
    assert argv[0] == "specd"
    return argv[1:]


def _waits(cluster: TemporalExecutor, task: str) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while (view := cluster.view(task))["status"] != "WAITING_FOR_HUMAN":
        assert time.monotonic() < deadline, f"{task} never waited on Temporal: {view['status']}{cluster.said()}"
        time.sleep(0.3)
    return view


@pytest.mark.parametrize("record", ["kept", "deleted"])
def test_a_task_brought_back_from_temporal_goes_on_after_its_last_finished_step(
        tmp_path: Path, temporal_server: DevServer, record: str) -> None:
    """Its workflow runs s2 after s1 was done on a worker. `continue` here is refused; its fix, followed as printed
    (cancel, then `run --move`), brings the branch its workers pushed into the task's worktree; the task is
    CANCELLED there, so `continue` refuses it as it would a local one, and `rerun --from s2` goes on: s1 never runs
    again. With the home record deleted after the cancel (as an older fix said), nothing starts here either."""
    repo = Repo(tmp_path)
    repo.new("w")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    hold = repo.dir / "hold-w-s2"
    try:
        hold.write_text("")
        cluster.submit("w", "--auto")
        cluster.wait_held(["w-s2"])  # s1 is done and pushed; s2's agent runs on the worker
        refused = repo.specd("continue", "w", "--auto", "--agent", repo.agent())
        assert refused.returncode == 2, _said(refused)
        cancel = _fix(refused, r"`(specd cancel w)` \(if its workflow still runs\)")
        bring = _fix(refused, r"then `(specd run w --move)`")
        too_soon = repo.specd(*bring)  # its workflow still runs
        assert too_soon.returncode == 2, _said(too_soon)
        assert "still runs on Temporal" in _said(too_soon)
        assert "`specd cancel w` stops it" in _said(too_soon)

        cancelled = repo.specd(*cancel)  # as printed: this clone knows where its workflow runs
        assert cancelled.returncode == 0, _said(cancelled)
        hold.unlink()
        if record == "deleted":
            (repo.root / ".specd" / "homes" / "w.json").unlink()
            shown = _status(repo, "w")
            assert (shown["status"], shown["hint"]) == ("CANCELLED", "specd run w --move")
            again = repo.specd("continue", "w", "--auto", "--agent", repo.agent())
            assert again.returncode == 2, _said(again)
            assert "`specd run w --move`" in _said(again)
            assert not (repo.root / ".specd" / "tasks" / "w" / ".pipeline-state.json").exists()  # nothing ran here

        moved = repo.specd(*bring)  # as printed: the run's own agent and mode, as its workers left them
        said = _said(moved)
        assert "w: moved w here from Temporal" in said
        rerun = _fix(moved, r"it ended CANCELLED at s2: `(specd rerun w --from s2)` goes on from there")
        assert (_home(repo, "w")["kind"], _home(repo, "w")["path"]) == ("worktree", ".specd/worktrees/w")
        assert _ledger((repo.tree("w") / "ledger-w.txt").read_text()) == ["s1"]  # the worker's step, as pushed

        final = repo.specd("continue", "w", "--auto", "--agent", repo.agent())  # CANCELLED, as it is locally
        assert final.returncode == 2, _said(final)
        assert "specd rerun w --from STEP" in _said(final)
        go_on = repo.specd(*rerun)  # as printed
        assert go_on.returncode == 0, _said(go_on)
        shown = _status(repo, "w")
        assert shown["status"] == "COMPLETE"
        assert shown.get("temporal") is None  # its copy here is its truth now
        assert [row["step"] for row in shown["history"] if not row.get("superseded")] == ["s1", "s2", "s3"]
        assert _ledger((repo.tree("w") / "ledger-w.txt").read_text()) == ["s1", "s2", "s3"]  # each step once
        assert not (repo.root / ".specd" / "tasks" / "w" / ".pipeline-state.json").exists()  # one copy
        landed = repo.specd("land", "w")
        assert landed.returncode == 0, _said(landed)
        assert _ledger((repo.root / "ledger-w.txt").read_text()) == ["s1", "s2", "s3"]
    finally:
        hold.unlink(missing_ok=True)
        cluster.close()


def test_a_task_that_ran_a_step_in_the_main_tree_moves_to_temporal_and_goes_on_there(
        tmp_path: Path, temporal_server: DevServer) -> None:
    """s1 ran here (`specd continue`) and the gate before s2 waits. Submitting it is refused with a fix that works
    when followed: `run --executor temporal --move` pushes the commit that holds its state, its workflow waits at
    the same gate, an answer sends it on, and s1 never runs again. A change to its folder not committed is refused
    first (its branch would not hold it), and so is a move while a run here holds it."""
    repo = Repo(tmp_path, pause="s2")
    repo.new("t")
    cluster = TemporalExecutor(repo, temporal_server, workers=1, mode="semi-auto")
    try:
        held = repo.specd("continue", "t", "--semi-auto", "--agent", repo.agent())
        assert held.returncode == 3, _said(held)
        refused = repo.specd("run", "t", "--executor", "temporal", *cluster.flags())
        assert refused.returncode == 2, _said(refused)
        assert "already runs on this machine, in the main tree" in _said(refused)
        fix = _fix(refused, r"then `(specd run t --executor temporal [^`]* --move)`")
        assert fix == ["run", "t", "--executor", "temporal", *cluster.flags(), "--move"]

        notes = repo.root / ".specd" / "tasks" / "t" / "FEATURE.md"
        before = notes.read_text()
        notes.write_text(before + "\nOne more thing.\n")
        dirty = repo.specd(*fix)
        assert dirty.returncode == 2, _said(dirty)
        assert "not committed (.specd/tasks/t/FEATURE.md)" in _said(dirty)
        notes.write_text(before)
        holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(notes.parent)], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "held"
            busy = repo.specd(*fix)
            assert busy.returncode == 2, _said(busy)
            assert f"already being run by pid {holder.pid}" in _said(busy)
        finally:
            holder.terminate()
            holder.wait(timeout=60)

        moved = repo.specd(*fix)  # as printed
        assert moved.returncode == 0, _said(moved)
        assert "t: moved specd-" in moved.stdout
        assert _home(repo, "t")["kind"] == "temporal"
        here = repo.specd("continue", "t", "--semi-auto", "--agent", repo.agent())
        assert here.returncode == 2, _said(here)
        assert "runs on Temporal" in _said(here)

        waiting = _waits(cluster, "t")
        assert waiting["next"]["step"] == "s2"
        assert cluster.approve("t", "--note", "go on there").returncode == 0
        assert cluster.ended("t")["status"] == "COMPLETE"
        state = cluster.state("t")
        assert _ledger(repo.git("show", "origin/specd/t:ledger-t.txt")) == ["s1", "s2", "s3"]  # s1 once, here
        assert [row["note"] for row in state["checkpoints"] if row["answer"] == "approve"] == ["go on there"]
        landed = repo.specd("land", "t")
        assert landed.returncode == 0, _said(landed)
        assert _ledger((repo.root / "ledger-t.txt").read_text()) == ["s1", "s2", "s3"]
    finally:
        cluster.close()


def test_a_task_in_its_worktree_moves_to_temporal_and_its_worktree_goes(tmp_path: Path,
                                                                        temporal_server: DevServer) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("k")
    cluster = TemporalExecutor(repo, temporal_server, workers=1, mode="semi-auto")
    try:
        local = repo.specd("run", "k", "--semi-auto", "--agent", repo.agent())
        assert local.returncode == 3, _said(local)  # s1 ran in .specd/worktrees/k; the gate before s2 waits
        moved = repo.specd("run", "k", "--executor", "temporal", *cluster.flags(), "--move")
        assert moved.returncode == 0, _said(moved)
        assert "k: removed its worktree .specd/worktrees/k (branch specd/k stays)" in moved.stdout
        assert not repo.tree("k").exists()
        assert repo.git("branch", "--list", "specd/k").strip()
        _waits(cluster, "k")
        assert cluster.approve("k").returncode == 0
        assert cluster.ended("k")["status"] == "COMPLETE"
        assert _ledger(repo.git("show", "origin/specd/k:ledger-k.txt")) == ["s1", "s2", "s3"]
    finally:
        cluster.close()


_HOLD = """
import sys, time
from pathlib import Path
from specd.state.lock import TaskLock
with TaskLock(Path(sys.argv[1]), "t"):  # as a run here holds it
    print("held", flush=True)
    time.sleep(600)
"""
