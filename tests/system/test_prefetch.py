"""Reading folders into the page cache with threads changes nothing but the time: a fast probe starts no thread,
a slow one reads every folder and joins its threads before returning, and nothing it meets (a FIFO, a missing
folder, a folder in place of a file) blocks or raises."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from specd.system import prefetch


def _folders(root: Path, count: int) -> list[str]:
    folders = []
    for i in range(count):
        folder = root / f"t{i}"
        folder.mkdir()
        (folder / "config.json").write_text("{}", encoding="utf-8")
        folders.append(str(folder))
    return folders


def test_a_fast_probe_starts_no_thread(tmp_path: Path) -> None:
    folders = _folders(tmp_path, 3 * prefetch.PROBE)
    assert not prefetch.warm(folders[:2 * prefetch.PROBE], ["config.json"])  # too few to be worth a probe
    assert not prefetch.warm(folders, ["config.json"])  # from the cache: fast


def test_a_slow_probe_reads_everything_and_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = _folders(tmp_path, 3 * prefetch.PROBE)
    os.mkfifo(Path(folders[-1], ".pipeline-state.json"))  # opened for reading, a FIFO would wait for a writer
    Path(folders[-2], ".pipeline-state.json").mkdir()
    folders.append(str(tmp_path / "gone"))
    before = {path: path.read_bytes() for path in tmp_path.glob("*/config.json")}
    monkeypatch.setattr(prefetch, "SLOW_NS", 0)
    assert not prefetch.warm(folders, ["config.json"])  # slow now, but nothing read from the disk
    monkeypatch.setattr(prefetch, "MIN_BLOCKS", 0)
    seen: list[str] = []
    real = prefetch._touch
    monkeypatch.setattr(prefetch, "_touch", lambda folder, names: seen.append(folder) or real(folder, names))
    running = set(threading.enumerate())  # a worker of the test runner may have threads of other tests' left
    assert prefetch.warm(folders, ["config.json", ".pipeline-state.json"])
    assert sorted(seen) == sorted(folders)
    assert set(threading.enumerate()) - running == set()  # every thread it started is joined
    assert before == {path: path.read_bytes() for path in tmp_path.glob("*/config.json")}
