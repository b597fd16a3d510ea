"""Where a jailed build writes what your own tools would take as theirs: a folder of specd's for each tree.

Python compiles into the tree's ``__pycache__`` and cargo builds into its ``target/``, and your own next `pytest`
or `cargo run` takes what it finds there as up to date, by its header or its time: a ``.pyc`` or a binary the
model left would run in place of what the sources say, outside any jail, and git ignores both. So a jailed
process is told to build elsewhere (``PYTHONPYCACHEPREFIX``, ``CARGO_TARGET_DIR``), into a folder under your own
cache folder (``~/.cache/specd/<kind>/<tree>``, or ``$XDG_CACHE_HOME/specd/…`` in HOME; made yours alone), bound
read-write into the jail at a path of its own /tmp and kept from step to step, so a step builds only what changed. The
tree's ``target/`` is read-only in the jail (``environments``), and what a step leaves in ``__pycache__`` goes
(``specd/git/ignored.py``).

Without bubblewrap the variables name the folders themselves. A worktree specd removes takes its folders with it
(``forget``); a folder whose tree is gone otherwise, or that no jail used for ``UNUSED_DAYS``, is forgotten by a look
over them all at most once every ``PRUNE_EVERY`` seconds: every run of twenty at once, and every step of a test
suite that made a thousand trees, once paid that look (80 ms at 1,750 folders) before its first jail.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

# variable, kind (the folder under <cache>/specd), where it shows in the jail, the file in the tree that asks for it
KINDS = (("PYTHONPYCACHEPREFIX", "pycache", "/tmp/.specd-pycache", ""),
         ("CARGO_TARGET_DIR", "cargo-target", "/tmp/.specd-cargo-target", "Cargo.toml"))
UNUSED_DAYS = 30
PRUNE_EVERY = 3600.0
STAMP = ".pruned"  # beside the folders: when they were last looked over
Folder = tuple[str, Path, str]  # variable, the folder of specd's for the tree, where it shows in the jail


def folders(root: Path, env: Mapping[str, str]) -> list[Folder]:
    """(variable, the folder of specd's for ``root``, where it shows in the jail) for each kind the tree needs;
    none without a HOME, or where the folder cannot be made."""
    cache = _cache(env)
    if cache is None:
        return []
    found = []
    for variable, kind, jailed, needs in KINDS:
        if needs and not (root / needs).is_file():
            continue
        folder = _folder(cache, kind, root)
        _prune(folder.parent)
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.utime(folder)  # in use: ``_prune`` leaves it
            mark = folder.with_suffix(".tree")  # beside it, where no jail shows it: whose it is
            if not mark.exists():
                mark.write_text(str(root), encoding="utf-8")
        except OSError:
            continue
        if folder.is_dir() and not folder.is_symlink():
            found.append((variable, folder, jailed))
    return found


def environment(found: list[Folder], jailed: bool) -> dict[str, str]:
    """The variables for a process of the tree whose ``folders`` are ``found``: the jail's paths, or without one
    the folders themselves."""
    return {variable: (inside if jailed else str(folder)) for variable, folder, inside in found}


def binds(found: list[Folder]) -> list[str]:
    """bwrap flags: each folder read-write at its place in the jail's own /tmp (under HOME it would make the jail's
    ``~/.cache`` read-only: bubblewrap seals the folders it makes on the way)."""
    return [arg for _, folder, inside in found for arg in ("--bind", str(folder), inside)]


VARIABLES = tuple(variable for variable, *_ in KINDS)


def forget(root: Path, env: Mapping[str, str]) -> None:
    """Remove the folders of specd's for the tree at ``root``, which is going (a worktree specd removes)."""
    cache = _cache(env)
    if cache is None:
        return
    for _, kind, _, _ in KINDS:
        _remove(str(_folder(cache, kind, root.resolve())))


def _cache(env: Mapping[str, str]) -> Path | None:
    """Your cache folder: ``$XDG_CACHE_HOME`` when it lies in HOME, which no jail shows, else ``~/.cache``; None
    without a HOME (never one made here: `HOME=/nonexistent`). Elsewhere it could be a folder a jail shows (under
    /opt, a tool's install, a ``SPECD_JAIL_READ`` folder), and with it the compiled code of every tree."""
    from specd.system.binds import HOME_TOOLS, home_of

    home = home_of(env)
    if home is None or not home.is_dir():
        return None
    given = env.get("XDG_CACHE_HOME", "")
    if not given.startswith("/"):
        return home / ".cache"
    cache = Path(os.path.normpath(given))
    inside = cache.is_relative_to(home) and cache != home
    shown = any(cache.is_relative_to(home / tool) or (home / tool).is_relative_to(cache) for tool in HOME_TOOLS)
    return cache if inside and not shown else home / ".cache"


def _folder(cache: Path, kind: str, root: Path) -> Path:
    return cache / "specd" / kind / hashlib.sha256(str(root).encode()).hexdigest()[:16]


def _remove(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):  # another user's (a shared HOME): theirs to forget
        Path(path).with_suffix(".tree").unlink(missing_ok=True)


@functools.cache  # once a process
def _prune(parent: Path) -> None:
    """Forget the folders of trees that are gone (the ``.tree`` file beside each names its tree) or that no jail
    used for ``UNUSED_DAYS``, unless they were looked over in the last ``PRUNE_EVERY`` seconds."""
    import time

    stamp = parent / STAMP
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY:
            return
    except OSError:
        pass  # never looked over (or cannot be told): now
    with contextlib.suppress(OSError):
        stamp.touch()
    try:
        with os.scandir(parent) as entries:
            found = [(entry.path, entry.stat(follow_symlinks=False).st_mtime) for entry in entries
                     if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for path, used in found:
        mark = Path(path).with_suffix(".tree")
        try:
            gone = not os.path.lexists(mark.read_text(encoding="utf-8")[:4096])
        except (OSError, UnicodeDecodeError, ValueError):
            gone = False
        if gone or time.time() - used > UNUSED_DAYS * 86400:
            _remove(path)
