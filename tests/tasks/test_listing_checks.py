"""The faster checks of a listing (issue 33) hide nothing: the kept printed listing's signatures looked at together
(from their parent's descriptor, shared with a forked copy) follow any change. (That the store's write, which looks
at all its rows' texts in one pass, flags whatever one row alone would flag is in test_status_cache.py.)"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from brain_harness import Harness

from specd.system import fanout
from specd.tasks.readmodel import signature
from specd.tasks.readmodel.rows import RACY_NS


def _in_place(path: Path) -> None:
    """The same bytes written again in place (same inode, same size): only the change time moves."""
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.write(data)


def test_the_signatures_looked_at_together_follow_an_edit_in_any_folder(h: Harness,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"t{i}" for i in range(6)]
    for name in names:
        h.new(name)
    time.sleep(2 * RACY_NS / 1e9)
    monkeypatch.setattr(signature, "MIN_FORK", 2)  # the fork's path, with six folders
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    forks: list[int] = []
    real = fanout.fork_map
    monkeypatch.setattr(fanout, "fork_map", lambda func, items, min_items: forks.append(len(items)) or real(
        func, items, min_items))
    folders = [str(h.task_dir(name)) for name in names]
    pairs = [[folder, signature.marks(folder)[0]] for folder in folders]  # type: ignore[index]
    assert signature.all_still(pairs)
    assert all(signature.still(folder, sig) for folder, sig in pairs)
    for broken in ([["x"]], [[1, 2]], "junk", [[folders[0], [1]]], [[folders[0], pairs[1][1]]]):
        assert not signature.all_still(broken), broken
    for index in (0, 5):  # the first half (this process) and the second (the forked copy)
        _in_place(Path(folders[index], "config.json"))
        assert not signature.all_still(pairs), index
        pairs[index][1] = signature.marks(folders[index])[0]  # type: ignore[index]
        assert signature.all_still(pairs)
    shutil.rmtree(folders[3])
    assert not signature.all_still(pairs)
    assert set(forks) == {2}  # each check went through the fork's path: two halves
