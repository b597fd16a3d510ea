"""Bringing a task back from Temporal, through the real CLI, a dev server and a `specd worker`: the printed fix
followed step by step, and the task's history kept (no step it finished runs again, one copy at a time).

It used to start again from its first step, in a second copy, when its home record was deleted as the fix said.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
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
