"""A git repository of its own that a step made or changed inside the tree: held for a person like hidden source.

git takes nothing in a folder holding a ``.git`` into a commit: a new folder with one shows in `git status` as a
single entry ("sub/"), and a ``.git`` put into a folder whose files git tracks shows nowhere at all. So a step that
runs `git init sub` next to ``sub/conftest.py`` leaves files no commit or review shows, which your own next
`pytest` collects; and whatever the config or a hook of such a repository names runs, as you, whenever git runs
there (your editor's git looks into the folders of what you open). Held (``hidden``'s wait), with the repository
named: in a folder git shows as one entry, its source and settings, all of them when the step made the repository
(its HEAD is new), else what the step made or changed; in a folder of tracked files, the settings the step made or
changed. A submodule's ``.git`` that a step pointed elsewhere is held too: the jail keeps it read-only
(``system/submodules``), but a step run outside the jail can rewrite it, and your own `git status` then runs what
the config it points at names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from specd.git.repo import git
from specd.git.sources import GIT, code, fresh, settings
from specd.system import findfiles

_TRACKED: dict[Path, set[str]] = {}  # the folders of git's files, asked of git once a run (per work tree)


def repositories(top: Path, folders: Sequence[str], since_ns: int, changed: Iterable[str] = ()) -> dict[str, str]:
    """Each file held in a repository of its own (see the module), with its ``.git`` as the rule that hides it.
    ``folders``: what git shows as one untracked entry ("sub/"); ``changed``: the paths the step changed, whose
    folders git will track once they are committed."""
    found: dict[str, str] = {}
    for folder in folders:
        dot = top / folder / GIT
        if not folder.endswith("/") or not os.path.lexists(dot):
            continue
        made = fresh(dot / "HEAD" if dot.is_dir() and not dot.is_symlink() else dot, since_ns)  # `git init`, a clone
        for path in code(top, folder.rstrip("/"), 0 if made else since_ns):
            found.setdefault(path, folder + GIT)
    for folder in tracked(top, changed):
        for setting in settings(top / folder / GIT, since_ns):
            found.setdefault(os.path.relpath(setting, top), f"{folder}/{GIT}")
    return found


def tracked(top: Path, changed: Iterable[str] = ()) -> list[str]:
    """The folders holding files git tracks (not the top, whose ``.git`` is the repository's own) that hold a
    ``.git``: git's folders as of the first call (from the index as the run's search for secret files listed it,
    else from HEAD), and those of the paths ``changed`` since."""
    if top not in _TRACKED:
        index = findfiles.indexed(top)  # the run's search for secret files listed them: no git process more
        if index is not None:  # and the submodules, whose `.git` a step outside the jail can point elsewhere
            _TRACKED[top] = _folders(index) | {os.path.relpath(link, top) for link in findfiles.gitlinks(top)}
        else:
            listed = git(top, "ls-tree", "-r", "-d", "-z", "--name-only", "HEAD")
            _TRACKED[top] = set(listed.stdout.split("\0")) - {""} if listed.returncode == 0 else set()
    folders = _TRACKED[top]
    folders |= _folders(path.rstrip("/") for path in changed)
    base = str(top)  # one lstat a folder, as strings: 3 µs each, where Path joins took 10
    return sorted(folder for folder in folders if os.path.lexists(f"{base}/{folder}/{GIT}"))


def _folders(paths: Iterable[str]) -> set[str]:
    """Every folder above each of ``paths`` (``src`` and ``src/pkg`` for ``src/pkg/a.py``), but the top: a `.git`
    in ``src`` is where `cd src && git status` looks first, though ``src`` holds no file of its own."""
    found: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return found
