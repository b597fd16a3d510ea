"""The sweep after each step looks at specd's own descendants, not at every process on the machine.

psutil finds descendants by reading the stat file of every process (`ppid_map`): on a desktop with hundreds of
processes that was most of a sweep, after every step of every task. On Linux the sweep follows
``/proc/<pid>/task/<tid>/children`` down from specd instead; these tests hold it to psutil's answer, threads
and reparented orphans included, and check that it never reads the machine's process table.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from specd.system import reaper

pytestmark = pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task").is_dir(), reason="Linux procfs only")


def _spawn(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    quiet: dict[str, object] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    return subprocess.Popen(argv, **{**quiet, **kwargs})  # type: ignore[call-overload,no-any-return]


def _wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.fixture
def tree() -> Iterator[dict[str, int]]:
    """A main-thread child with two grandchildren, a child started from another thread, and an orphan whose
    parent has exited (reparented to this process, its subreaper)."""
    assert reaper.become_subreaper()
    started: list[subprocess.Popen[bytes]] = []
    family = _spawn(["sh", "-c", "sleep 60 & sleep 60 & wait"], start_new_session=True)
    started.append(family)
    from_thread: list[subprocess.Popen[bytes]] = []
    worker = threading.Thread(target=lambda: from_thread.append(_spawn(["sleep", "60"])))
    worker.start()
    worker.join()
    started += from_thread
    leaver = _spawn(["sh", "-c", "sleep 60 & echo $!"], stdout=subprocess.PIPE, start_new_session=True)
    assert leaver.stdout is not None
    orphan = int(leaver.stdout.readline())
    leaver.wait()
    leaver.stdout.close()
    _wait_for(lambda: len(psutil.Process(family.pid).children()) == 2, "the family's two sleeps started")
    _wait_for(lambda: psutil.Process(orphan).ppid() == os.getpid(), "the orphan was reparented to its subreaper")
    ours = {family.pid, from_thread[0].pid, orphan, *(p.pid for p in psutil.Process(family.pid).children())}
    try:
        yield {"family": family.pid, "thread": from_thread[0].pid, "orphan": orphan}
    finally:
        for pid in ours:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        for proc in started:
            proc.wait()
        for pid in ours:
            reaper._reap(pid, time.monotonic() + 5)


def test_the_walk_finds_what_psutil_finds_threads_and_orphans_included(tree: dict[str, int]) -> None:
    walked = reaper._children_files(os.getpid())
    assert walked is not None
    expected = {p.pid for p in psutil.Process().children(recursive=True)}
    grandchildren = {p.pid for p in psutil.Process(tree["family"]).children()}
    assert len(grandchildren) == 2
    assert {tree["family"], tree["thread"], tree["orphan"], *grandchildren} <= set(walked)
    assert set(walked) == expected
    assert len(walked) == len(set(walked))  # each once
    assert walked.index(tree["family"]) < min(walked.index(pid) for pid in grandchildren)  # parents first


def test_a_sweep_kills_a_session_and_reads_no_other_process(tree: dict[str, int],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    grandchildren = {p.pid for p in psutil.Process(tree["family"]).children()}

    def whole_table() -> dict[int, int]:
        raise AssertionError("the sweep read the stat file of every process on the machine")

    monkeypatch.setattr(psutil, "_ppid_map", whole_table)  # what Process.children reads the table with
    monkeypatch.setattr(psutil, "process_iter", whole_table)
    killed = reaper.sweep(tree["family"])
    assert set(killed) == {tree["family"], *grandchildren}
    assert psutil.Process(tree["thread"]).status() != psutil.STATUS_ZOMBIE  # another session: left alone
    assert psutil.Process(tree["orphan"]).is_running()
    for pid in grandchildren:
        _wait_for(lambda pid=pid: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE,
                  "a killed grandchild ended")


def test_without_the_children_files_psutil_finds_them(tree: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reaper, "_children_files", lambda me: None)
    found = {p.pid for p in reaper._descendants(os.getpid())}
    assert {tree["family"], tree["thread"], tree["orphan"]} <= found


def test_a_pid_that_is_not_there_cannot_be_told() -> None:
    assert reaper._children_files(2**22 + 12345) is None  # psutil's way decides then
