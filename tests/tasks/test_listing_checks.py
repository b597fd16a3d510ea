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
    root = str(h.root)
    folders = [str(h.task_dir(name)) for name in names]
    pairs = [(folder, signature.marks(folder)[0]) for folder in folders]  # type: ignore[index]

    def packed() -> bytes:
        blob = signature.pack(pairs, root)
        assert blob is not None
        return blob

    unpacked = signature.unpack(packed())
    assert unpacked is not None
    assert [f"{root}/{name}" for name in unpacked[0]] == folders
    assert not any(name.startswith("/") for name in unpacked[0])  # relative to the project: fewer bytes to read
    assert signature.all_still(packed(), root)
    assert all(signature.still(folder, sig) for folder, sig in pairs)
    whole = packed()
    for broken in (b"", b"x" * 7, "junk", None, 5, whole[:-1], whole[:-16], whole + b"\0" * 8,
                   (10 ** 6).to_bytes(8, "little") + whole[8:], signature.pack([(folders[0], pairs[1][1])], root)):
        assert not signature.all_still(broken, root), broken
    assert signature.pack([(folders[0], ["x", 1])], root) is None  # type: ignore[list-item]
    assert signature.pack([(folders[0], [1 << 70, 1])], root) is None
    assert signature.pack([(folders[0], [1, 2, 3])], root) is None
    for index in (0, 5):  # the first half (this process) and the second (the forked copy)
        _in_place(Path(folders[index], "config.json"))
        assert not signature.all_still(packed(), root), index
        pairs[index] = (folders[index], signature.marks(folders[index])[0])  # type: ignore[index]
        assert signature.all_still(packed(), root)
    shutil.rmtree(folders[3])
    assert not signature.all_still(packed(), root)
    outside = signature.pack([(folders[0], pairs[0][1])], "/elsewhere")  # a folder outside the root stays whole
    back = signature.unpack(outside)
    assert back is not None
    assert (back[0], list(back[1])) == ([folders[0]], pairs[0][1])
    assert set(forks) == {2}  # each check went through the fork's path: two halves
