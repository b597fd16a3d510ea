"""The lock probe behind `specd status` only reads: it creates no file, and tells live from dead holders."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from brain_harness import Harness

from specd.state.lock import TaskLock


def test_status_creates_no_lock_file(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    before = sorted(p.name for p in h.task_dir("t").iterdir())
    h.status("t")
    assert h.specd("status").returncode == 0
    assert sorted(p.name for p in h.task_dir("t").iterdir()) == before
    assert not (h.task_dir("t") / ".run.lock").exists()


def test_probe_sees_a_live_holder_and_not_a_dead_one(tmp_path: Path) -> None:
    holder = TaskLock(tmp_path, "t")
    with holder:
        assert TaskLock(tmp_path, "t").is_held()
    assert not TaskLock(tmp_path, "t").is_held()
    # A holder killed with SIGKILL leaves its owner file; its pid is gone, so the task is not running.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    (tmp_path / ".run.lock.owner").write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}),
                                              encoding="utf-8")
    assert not TaskLock(tmp_path, "t").is_held()
    # A live pid that does not hold the lock (a reused pid) is not a holder either.
    (tmp_path / ".run.lock.owner").write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}),
                                              encoding="utf-8")
    assert not TaskLock(tmp_path, "t").is_held()
