"""Files of given names anywhere under a project, at a bounded cost: git lists most, a walk finds the rest.

A project's secret files may sit at any depth: a monorepo's ``apps/web/.env``, ``.devcontainer/.env``, a
``.vercel/.env.local``, a ``.env`` a build copied into ``dist/``. Walking the whole tree costs 15-20 µs a folder
in Python, and a big ``node_modules`` has 40,000 folders (0.6 s, every step and every command the agent runs).
So git answers for the project's own tree, in two processes (a few milliseconds): its tracked and untracked
files (a nested repository shows as ``sub/``), then what it ignores, with ignored folders collapsed
(``node_modules/``, ``.venv/``). Only those folders, nested repositories and submodules are walked here, at most
``MAX_FOLDERS`` folders a call, and a folder's walk is kept while its own mtime holds: dependencies do not grow
keys between two steps. Without git (or when git fails) the project is walked the same way, its own folders
before heavy ones.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from specd.redact import scrubbed_env
from specd.system.gitsafe import OPTIONS

if TYPE_CHECKING:
    import subprocess

MAX_FOLDERS = 20_000  # folders walked in one call (about 0.3 s); git's own listing is not counted
NESTED = 3  # repositories inside repositories, as deep as this
HEAVY = frozenset({"node_modules", ".venv", "venv", "site-packages", "__pycache__", ".tox", ".cache", "vendor",
                   "target", "dist", "build", ".next", ".mypy_cache", ".pytest_cache"})
GIT = ["git", *OPTIONS]  # runs nothing the project names
TIMEOUT = 30.0

Wanted = Callable[[str], bool]
# (folder, wanted, heavy) -> (the folder's mtime, what was found)
_walks: dict[tuple[str, Wanted, bool], tuple[int, list[str]]] = {}
_gitlinks: dict[str, list[str]] = {}  # root -> the submodules its last search met (``gitlinks``)
_tracked: dict[str, list[str]] = {}  # root -> what its last search found that git tracks (``tracked``)
_indexed: dict[str, list[str]] = {}  # root -> every path in its index, as its last search listed them (``indexed``)
GITLINK = "160000"  # the mode git's index gives a submodule


@dataclass
class _Walk:
    wanted: Wanted
    heavy: bool  # whether dependencies' folders (HEAVY) are walked too
    budget: int
    gitlinks: list[str] = field(default_factory=list)  # the submodules met, as absolute paths
    tracked: list[str] = field(default_factory=list)  # the wanted files git tracks, as absolute paths


def find(root: Path, wanted: Wanted, heavy: bool = True) -> list[Path]:
    """Regular files under ``root`` whose name ``wanted`` accepts, sorted; never inside a ``.git`` folder.
    ``heavy=False`` leaves out the folders of dependencies (``HEAVY``) that git does not list."""
    found: set[str] = set()
    walk = _Walk(wanted, heavy, MAX_FOLDERS)
    _find(root, walk, found, NESTED)
    _gitlinks[str(root)] = walk.gitlinks
    _tracked[str(root)] = walk.tracked
    return sorted(Path(path) for path in found)


def gitlinks(root: Path) -> list[Path]:
    """The submodules (the index's entries of mode 160000, in the project and in its submodules) that the last
    ``find`` under ``root`` met: read from the same `git ls-files` that lists the files, so they cost nothing."""
    return [Path(path) for path in _gitlinks.get(str(root), [])]


def tracked(root: Path) -> list[Path]:
    """What the last ``find`` under ``root`` found that git tracks (in the index): its committed content lies in
    the repository's objects too, whatever becomes of the file."""
    return [Path(path) for path in _tracked.get(str(root), [])]


def indexed(root: Path) -> list[str] | None:
    """Every path git's index held when the last ``find`` under ``root`` listed it (relative to ``root``), or None
    when none did (or git could not tell)."""
    return _indexed.get(str(root))


def _find(root: Path, walk: _Walk, found: set[str], nested: int) -> None:
    listing = _listing(root) if nested > 0 else None
    if listing is None:
        found.update(_walk(str(root), walk))
        return
    files, folders, links, indexed = listing
    if nested == NESTED:
        _indexed[str(root)] = indexed  # the list itself, not a copy: a monorepo's index holds 100,000 paths
    walk.gitlinks += [str(root / link) for link in links]
    walk.tracked += [str(root / f) for f in indexed if walk.wanted(f.rpartition("/")[2])]
    found.update(str(root / f) for f in files if walk.wanted(f.rpartition("/")[2]) and (root / f).is_file())
    # The project's own ignored folders (`.vercel/`, `tmp/`) before dependencies, which may spend the budget.
    for folder in sorted(_outermost(folders), key=lambda f: _name(f) in HEAVY):
        path = root / folder
        if (path / ".git").exists():  # a repository of its own: git knows it best
            _find(path, walk, found, nested - 1)
        elif walk.heavy or _name(folder) not in HEAVY:
            found.update(_walk_kept(path, walk))


def _listing(root: Path) -> tuple[list[str], list[str], list[str], list[str]] | None:
    """(files, folders to walk, submodules, the files git tracks) relative to ``root``, or None when git cannot
    tell (not a repository)."""
    if not in_repository(root):
        return None  # git would only say so, two processes later
    # No pathspec on the first: one would hide the nested repositories, and names are filtered as fast here.
    # Both at once: each waits on the disk and its own start-up, not on the other.
    staged, ignored = _git(root, ["-s", "-o", "--exclude-standard"],  # tracked (with modes), untracked not ignored
                           ["-o", "-i", "--exclude-standard", "--directory"])  # ignored folders collapsed
    if staged is None or ignored is None:
        return None
    own, links, indexed = _staged(staged)
    files = [entry for entry in [*own, *ignored] if not entry.endswith("/")]
    # git lists nothing inside a submodule: each is a folder to look into, as the index names them (.gitmodules,
    # a file of the tree, could say anything)
    folders = [entry for entry in [*own, *ignored] if entry.endswith("/")] + [f"{link}/" for link in links]
    return files, folders, links, indexed


def _staged(entries: list[str]) -> tuple[list[str], list[str], list[str]]:
    """`ls-files -s -o` names (a tracked one as ``<mode> <object> <stage>\\t<path>``, an untracked one bare):
    every path, those of the submodules, and the tracked files."""
    paths: list[str] = []
    links: list[str] = []
    indexed: list[str] = []
    for entry in entries:
        meta, tab, path = entry.partition("\t")
        if tab and meta[:6].isdigit() and meta[6:7] == " " and meta[-2:-1] == " ":
            paths.append(path)
            (links if meta[:6] == GITLINK else indexed).append(path)
        else:
            paths.append(entry)
    return paths, links, indexed


def in_repository(root: Path) -> bool:
    """Whether git may list ``root``: a ``.git`` (folder or file) in it or above it, or GIT_DIR set."""
    return bool(os.environ.get("GIT_DIR")) or top(root) is not None


def top(root: Path) -> Path | None:
    """The work tree ``root`` is in (the nearest folder with a ``.git``), which git's paths start from."""
    root = root.absolute()
    return next((folder for folder in (root, *root.parents) if os.path.lexists(folder / ".git")), None)


def _git(root: Path, *asks: list[str]) -> list[list[str] | None]:
    """`git ls-files -z` with each of ``asks``, run side by side: each one's names, or None where git failed."""
    import subprocess  # here: `specd status` reaches this module, but a project needs git only now and then

    env = {**scrubbed_env(), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    procs: list[subprocess.Popen[bytes] | None] = []
    for args in asks:
        try:
            procs.append(subprocess.Popen([*GIT, "ls-files", "-z", *args], cwd=root, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env))
        except OSError:
            procs.append(None)
    try:
        return [_names(proc) for proc in procs]
    finally:  # interrupted: none is left running
        for proc in procs:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def _names(proc: subprocess.Popen[bytes] | None) -> list[str] | None:
    import subprocess

    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return [os.fsdecode(entry) for entry in out.split(b"\0") if entry] if proc.returncode == 0 else None


def _outermost(folders: list[str]) -> list[str]:
    """Folders not inside another one listed (git lists ``src/a/`` and ``src/a/b/`` both, at times)."""
    kept: list[str] = []
    for folder in sorted(set(folders)):
        if not kept or not folder.startswith(kept[-1]):
            kept.append(folder)
    return kept


def _name(folder: str) -> str:
    return folder.rstrip("/").rpartition("/")[2]


def _walk_kept(folder: Path, walk: _Walk) -> list[str]:
    try:
        mtime = folder.stat().st_mtime_ns
    except OSError:
        return []
    key = (str(folder), walk.wanted, walk.heavy)
    kept = _walks.get(key)
    if kept is not None and kept[0] == mtime:
        return kept[1]
    found = _walk(str(folder), walk)
    _walks[key] = (mtime, found)
    return found


def _walk(top: str, walk: _Walk) -> list[str]:
    """Breadth first, the project's own folders before heavy ones, until the budget is spent."""
    found: list[str] = []
    light, heavy = deque([top]), deque[str]()
    wanted, skipped = walk.wanted, (HEAVY | {".git"}) if not walk.heavy else frozenset({".git"})
    while (light or heavy) and walk.budget > 0:  # names in locals: this loop sees every file of the tree
        folder = light.popleft() if light else heavy.popleft()
        walk.budget -= 1
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if name not in skipped:
                            (heavy if name in HEAVY else light).append(entry.path)
                    elif wanted(name) and entry.is_file():
                        found.append(entry.path)
        except OSError:
            continue
    return found
