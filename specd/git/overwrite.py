"""What a merge would overwrite in the user's work tree: every file of theirs git would not keep.

`git merge` refuses to overwrite a changed tracked file or an untracked one, but it treats an ignored file
as expendable: a `local.cfg` the user keeps out of git is replaced without a word when the merged branch
commits one, and an ignored folder (`build/`) is deleted whole when the branch puts a file there. So the
paths the merge writes (HEAD against the merged tree, which `git merge-tree --write-tree` made without
touching any tree) are each looked at on disk, with the folders above them.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from specd.errors import listed
from specd.git.repo import git

SHOWN = 20  # a refusal names this many paths; an ignored node_modules/ must not fill the screen


def in_the_way(top: Path, merged_tree: str, spare: Collection[str] = ()) -> list[str]:
    """Each path the merge from HEAD to ``merged_tree`` would overwrite or delete without git keeping it,
    with why (``"local.cfg (ignored by git)"``). ``top``: the work tree's top folder, which git names paths
    from; ``spare``: paths the caller clears itself first."""
    written = _written(top, merged_tree)
    status = _status(top)
    found: list[str] = []
    looked: set[str] = set()  # folders above new paths, each looked at once
    for path, change in written.items():
        if path in spare:
            continue
        if path in status:
            found.append(f"{path} ({_how(status[path])})")
        elif change == "A" and os.path.lexists(top / path):  # new to HEAD, yet something is there
            held = _folder(top, path, written) if _is_folder(top / path) else f"{path} (ignored by git)"
            found += [held] if held else []
        if change == "A":
            found += _above(top, path, written, status, looked)
    return found


def refusal(found: list[str]) -> str:
    """``found`` for a message, cut at ``SHOWN``."""
    return listed(found, SHOWN)


def _written(top: Path, merged_tree: str) -> dict[str, str]:
    """Each path the merge changes in the work tree → A (new to HEAD), M, T or D."""
    fields = git(top, "diff", "--name-status", "-z", "--no-renames", "HEAD", merged_tree).stdout.split("\0")
    return dict(zip(fields[1::2], (kind[:1] for kind in fields[::2]), strict=False))


def _status(top: Path) -> dict[str, str]:
    """Each changed, staged or untracked path → its porcelain XY (ignored files are not listed)."""
    out = git(top, "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all",
              "--ignore-submodules=all").stdout
    return {entry[3:]: entry[:2] for entry in out.split("\0") if entry}


def _how(xy: str) -> str:
    return "untracked" if xy == "??" else "changed, not committed"


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _folder(top: Path, path: str, written: dict[str, str]) -> str | None:
    """A folder where the merge puts a file: git deletes it, with whatever it holds beside the tracked files
    the merge removes anyway (None when that is all it holds)."""
    for folder, folders, files in os.walk(top / path):
        for name in files + [f for f in folders if Path(folder, f).is_symlink()]:
            inner = Path(folder, name).relative_to(top).as_posix()
            if written.get(inner) != "D":
                return f"{path}/ (a folder the merge replaces with a file; it holds {inner}, which git does not track)"
    return None


def _above(top: Path, path: str, written: dict[str, str], status: dict[str, str], looked: set[str]) -> list[str]:
    """A file or symlink of the user's where the merge needs a folder (``d`` for ``d/f``)."""
    found = []
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        if folder in looked or folder in written:
            continue  # looked at already, or a tracked file the merge removes
        looked.add(folder)
        if os.path.lexists(top / folder) and not _is_folder(top / folder):
            how = _how(status[folder]) if folder in status else "ignored by git"
            found.append(f"{folder} ({how}; the merge needs a folder there)")
    return found
