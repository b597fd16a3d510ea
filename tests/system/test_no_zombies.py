"""A long run leaves no zombie behind: each jailed step's leftovers are reaped, not only killed.

specd is the subreaper of what it starts, so bubblewrap's init inside the jail's PID namespace, which
outlives the bwrap that started it by a moment, is reparented to specd when it ends. Nothing waited for
it: every jailed step left a zombie, and the sweep after each step had one more process to look at.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from specd.engine.seam import run_task
from specd.events import EventBus
from specd.human import NoHuman
from specd.system import jail as jails
from specd.tasks.project import Project
from specd.tasks.setup import init_project
from specd.tasks.task import create_task


def test_twelve_jailed_steps_leave_no_zombie_child(tmp_path: Path) -> None:
    if not jails.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")
    project = Project(tmp_path)
    init_project(project)
    (tmp_path / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    steps = ", ".join(f'{{"name": "s{i}", "workflow": "w.md"}}' for i in range(12))
    (tmp_path / ".specd" / "pipeline.json").write_text(
        f'{{"schema_version": "1.0", "mode": "auto", "pipelines": {{"main": [{steps}]}}}}', encoding="utf-8")
    create_task(project, "t", "zombies")
    before = {p.pid for p in psutil.Process().children()}
    result = run_task(project, "t", mode_flag="auto", agent_spec="cmd:true", human_for=lambda mode: NoHuman(),
                      events=EventBus(lambda event: None))
    assert result.exit_code == 0
    left = [(p.pid, p.name(), p.status()) for p in psutil.Process().children() if p.pid not in before]
    assert left == []


def test_a_killed_child_is_reaped_when_it_ends_not_at_the_next_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep after a step reaps what it killed asleep on a pidfd (readable the moment the child ends), not
    in 10 ms naps: it took one after every jailed step. Where pidfds exist, no nap is taken at all."""
    import signal
    import subprocess
    import time

    from specd.system import reaper

    if not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd on this OS: the sleeping poll stands in")

    def no_nap(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s polling for a child that a pidfd would have said had ended")

    monkeypatch.setattr(reaper.time, "sleep", no_nap)
    child = subprocess.Popen(["sleep", "60"])
    os.kill(child.pid, signal.SIGKILL)
    reaper._reap(child.pid, time.monotonic() + 5)
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped already

    alive = subprocess.Popen(["sleep", "60"])
    try:
        reaper._reap(alive.pid, time.monotonic() + 0.2)  # one that does not end: given up at the deadline
        assert alive.poll() is None
    finally:
        alive.kill()
        alive.wait()
