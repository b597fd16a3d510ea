"""Where specd finds its own programs: git, bubblewrap, an agent CLI asked for its version, all run outside any jail.

They are found on PATH, and PATH may name a folder the agent can write: an activated venv of the project
(``/project/.venv/bin``), a ``node_modules/.bin`` inside it, or a relative or empty entry, which a lookup resolves
against the working folder, the project. A ``git`` the model left in any of them would run as you, with your keys,
the next time specd commits. So once specd knows the project, it looks its programs up on PATH without those
entries (``guard``), and the commands the agent and the pipeline run, inside the jail, get PATH as you set it
(``yours``): there the project's own tools come first, as you meant.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathlib waits for a command: `specd --help` guards PATH too
    from pathlib import Path

STASH = "SPECD_PATH_YOURS"  # PATH as you set it, kept beside the guarded one (a specd it starts guards from it)
_roots: list[str] = []  # real paths


def guard(root: Path | None = None) -> None:
    """From now on this process finds its programs on PATH less its relative and empty entries and those inside
    ``root`` (the project, its worktrees with it) or any root guarded before."""
    folders: list[str] = [] if root is None else [str(root), *_main_tree(str(root))]
    for folder in folders:
        if (resolved := os.path.realpath(folder)) not in _roots:
            _roots.append(resolved)
    given = os.environ.get("PATH") or ""
    stashed = os.environ.get(STASH)
    if stashed is not None and _drawn_from(given, stashed):
        given = stashed  # guarded already (here, or by the specd that started this one): start from yours
    kept = kept_of(given, _roots)
    if kept != given or stashed is not None:
        os.environ[STASH] = given
        os.environ["PATH"] = kept


def _main_tree(root: str) -> list[str]:
    """A worktree's main tree (``.git`` is then a file, ``gitdir: <main>/.git/worktrees/<name>``): a task there
    runs in the main tree, where its agent writes, and its ``.venv/bin`` on PATH is no safer from a worktree."""
    from pathlib import Path  # here: a guard without a root, `specd --help`'s, needs none

    from specd.system.ownfiles import read_regular

    try:
        pointer = read_regular(Path(root) / ".git", 4096, head=True).decode("utf-8", errors="replace")
    except OSError:  # a folder (a plain clone), no repository, or not a file of git's
        return []
    found = pointer.removeprefix("gitdir:").strip()
    main, sep, _ = found.rpartition(f"{os.sep}.git{os.sep}worktrees{os.sep}")
    return [main] if sep and main.startswith(os.sep) else []


def kept_of(given: str, roots: list[str]) -> str:
    return os.pathsep.join(entry for entry in given.split(os.pathsep) if trusted(entry, roots))


def trusted(entry: str, roots: list[str]) -> bool:
    """Whether a PATH entry is one specd may run its own programs from: absolute, and inside none of ``roots``."""
    return entry.startswith(os.sep) and not (roots and _within(os.path.realpath(entry), roots))


def _drawn_from(kept: str, given: str) -> bool:
    """Whether ``kept`` is ``given`` less some entries (a PATH set anew since, a test's say, is not)."""
    entries = iter(given.split(os.pathsep))
    return all(entry in entries for entry in kept.split(os.pathsep))  # in order: each found after the one before


def _within(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def yours(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with PATH as you set it, for a command the agent or the pipeline runs."""
    child = dict(env)
    given = child.pop(STASH, None)
    if given is not None:
        child["PATH"] = given
    return child


def inside(path: str) -> bool:
    """Whether ``path`` (a program found on PATH as you set it) lies inside a guarded root."""
    return _within(os.path.realpath(path), _roots)


def unseen(command: str, tree: Path) -> str:
    """Why a command a jail in ``tree`` could not find (exit 127) is on your PATH all the same: it lies in the main
    tree, which a task's worktree does not show. "" when that is not the reason."""
    import shutil

    words = command.split()
    found = shutil.which(words[0], path=os.environ.get(STASH) or os.environ.get("PATH")) if words else None
    if found is None or not inside(found) or _within(os.path.realpath(found), [os.path.realpath(tree)]):
        return ""
    return (f"; `{words[0]}` is {found} on your PATH, in the main tree, which a task's worktree does not show: make "
            "it in the worktree too (a pre hook), or install it outside the project")
