"""Every child specd starts dies with it, carries the run's marker, and is recorded while it runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specd.agents.proc import run_group
from specd.state.lock import TaskLock, read_groups, read_owner
from specd.system import children

PARENT = r'''
import os, sys, time
from specd.agents.proc import popen_child

child = popen_child([sys.executable, "-c", "import time; time.sleep(120)"], env=dict(os.environ))
print(child.pid, flush=True)
time.sleep(120)
'''


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_a_child_dies_when_its_parent_is_killed_with_sigkill(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30  # a safety net only: the kernel kills it at once
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the child outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        if "child" in locals() and alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_running_child_is_marked_and_recorded_in_the_owner_file(tmp_path: Path) -> None:
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, os, sys\n"
        "from specd.state.lock import read_groups\n"
        "from pathlib import Path\n"
        "owner = json.load(open(sys.argv[1]))\n"
        "print(json.dumps({'recorded': read_groups(Path(sys.argv[2])) == {os.getpgid(0)},\n"
        "                  'marked': os.environ.get('SPECD_OWNER') == owner['mark']}))\n", encoding="utf-8")
    log = tmp_path / "probe.log"
    with TaskLock(task_dir, "t") as lock, children.tracked_by(lock):
        written = lock.owner_path.stat()
        for _ in range(3):  # the owner file is written once a run, however many children start and end
            outcome = run_group(f"{sys.executable} {probe} {lock.owner_path} {lock.groups_path}", cwd=tmp_path,
                                env=dict(os.environ), stdin=None, log=log, timeout=60)
            assert outcome.returncode == 0, outcome.tail(2000)
            assert json.loads(log.read_text(encoding="utf-8")) == {"recorded": True, "marked": True}
            assert read_groups(lock.groups_path) == set()  # it ended, so it is no longer recorded
            assert lock.groups_path.stat().st_size <= 4096  # emptied past a page when no child runs
        now = lock.owner_path.stat()
        assert (now.st_ino, now.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
        assert "children" not in (read_owner(lock.owner_path) or {"children": 1})
    assert not lock.owner_path.exists()
    assert not lock.groups_path.exists()


def test_the_groups_file_keeps_only_the_groups_still_running(tmp_path: Path) -> None:
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    with TaskLock(task_dir, "t") as lock:
        lock.child_started(101)
        lock.child_started(202)
        lock.child_ended(101)
        assert read_groups(lock.groups_path) == {202}
        lock.child_ended(202)
        assert read_groups(lock.groups_path) == set()
        lock.groups_path.write_text("+7\n+x\n-\n+8\n-7\n\u00e9", encoding="utf-8")  # damaged lines are skipped
        assert read_groups(lock.groups_path) == {8}


def test_without_a_run_children_carry_no_marker(tmp_path: Path) -> None:
    log = tmp_path / "env.log"
    run_group(f"{sys.executable} -c \"import os; print(os.environ.get('SPECD_OWNER', 'none'))\"", cwd=tmp_path,
              env={k: v for k, v in os.environ.items() if k != "SPECD_OWNER"}, stdin=None, log=log, timeout=60)
    assert log.read_text(encoding="utf-8").strip() == "none"
