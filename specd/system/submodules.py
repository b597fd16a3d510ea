"""The project's submodules in the jail: what points at their git folders is read-only, and stays where it is.

A submodule's checkout holds ``.git``: a file naming its git folder (or, in older clones, the git folder
itself). It lies in the tree the agent writes, yet every `git status` of the project, the user's own and their
editor's, goes into each submodule and runs there whatever that git folder's config names (a clean filter on
any file whose times changed, an fsmonitor program). An agent that points it at a config of its own has its code
run outside the jail, as the user, after the step or while it runs. So, for each submodule in the index:
- its ``.git`` is bound read-only;
- a submodule not checked out (no ``.git`` in its folder) has its folder bound read-only whole, so that no
  ``.git`` can be made there; a folder missing altogether is made first, empty, as git itself leaves one;
- its folder and every folder between it and the project's root are bound onto themselves: a folder holding a
  mount cannot be renamed or removed, so the pointer cannot be moved aside with its folder and made anew.
The submodules come from the index (mode 160000, ``findfiles.gitlinks``), which lies in ``.git``, read-only in the
jail: a ``.gitmodules`` the agent edited changes nothing here. specd's own git calls never look inside a
submodule at all (``gitsafe``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def guards(root: Path, gitlinks: Iterable[Path]) -> list[str]:
    """bwrap flags for the submodules at ``gitlinks`` (absolute paths under ``root``), to come after the bind of
    ``root`` and before any bind inside it (a later bind of a folder would show what is mounted under it)."""
    args: list[str] = []
    pinned: set[Path] = set()
    for link in sorted(set(gitlinks)):
        try:
            parts = link.relative_to(root).parts
        except ValueError:
            continue
        if not parts or parts[0] in (".git", ".specd") or ".." in parts:
            continue  # specd's own folders are read-only whole already
        folders = [root.joinpath(*parts[:i]) for i in range(1, len(parts))]
        if any(folder.is_symlink() for folder in [*folders, link]):
            continue  # git goes no further than a link: nothing beyond it is a submodule to git
        for folder in folders:
            if folder not in pinned and folder.is_dir():
                args += ["--bind", str(folder), str(folder)]
                pinned.add(folder)
        pointer = link / ".git"
        if pointer.exists() and not pointer.is_symlink():
            args += ["--bind", str(link), str(link), "--ro-bind", str(pointer), str(pointer)]
        else:  # not checked out (or a link, which a bind would follow): nothing in it may change
            args += [*(() if link.is_dir() else ("--dir", str(link))), "--ro-bind", str(link), str(link)]
        pinned.add(link)
    return args
