"""Leftover processes are found through psutil, so the same code runs where there is no proc filesystem.

One exception: the sweep after each step follows ``/proc/<pid>/task/<tid>/children`` down from specd
(``reaper._children_files``), which looks at specd's own descendants instead of every process on the machine,
and falls back to psutil where those files are missing (tests/system/test_reaper_walk.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specd.system import children, reaper

ROOT = Path(__file__).resolve().parents[2]
# The code that finds and stops leftover processes, and the liveness check of a lock's owner.
LEFTOVER_CODE = ["specd/system/children.py", "specd/system/reaper.py", "specd/agents/proc.py",
                 "specd/state/lock.py", "specd/git/shared_tree.py"]


@pytest.mark.parametrize("path", LEFTOVER_CODE)
def test_no_proc_filesystem_path_is_left(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    if path.endswith("reaper.py"):  # the one walk with a psutil fallback, tested on its own
        start = text.index("def _children_files(")
        text = text[:start] + text[text.index("\ndef ", start + 1):]
    assert not re.search(r"/proc\b", text), f"{path} still reads /proc"


def test_where_the_os_has_no_death_signal_doctor_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # macOS, as children.py sees it: no prctl (and here no jail either).
    monkeypatch.setattr(children, "_PRCTL", None)
    monkeypatch.setattr("specd.system.jail.active", lambda: False)
    level, missing = children.protection()
    assert level == "psutil-only"
    assert any("no death signal" in m for m in missing)
    assert any("no child subreaper" in m for m in missing)
    assert any("no jail" in m for m in missing)


def test_a_marked_leftover_of_a_dead_run_is_found_and_stopped(tmp_path: Path) -> None:
    token = f"test-{os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, reaper.OWNER_ENV: token}
    # A stray that left its group (as `setsid cmd &` would) and ignores SIGTERM: only the token proves it ours.
    stray = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                              "signal.SIG_IGN); print('up', flush=True); time.sleep(60)"],
                             env=env, start_new_session=True, stdout=subprocess.PIPE)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert stray.stdout is not None
        assert stray.stdout.readline() == b"up\n"
        stopped = children.stop_leftovers({"mark": token, "children": [other.pid]})
        assert stopped == [stray.pid]
        assert stray.wait(timeout=30) == -signal.SIGKILL  # TERM was ignored, so KILL followed
        assert other.poll() is None  # in a recorded group, but nothing marked proves the group ours
        assert children.stop_leftovers({"mark": "", "children": [other.pid]}) == []
    finally:
        for proc in (stray, other):
            proc.kill()
            proc.wait()
