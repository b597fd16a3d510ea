"""The tree's own environments, read-only in the jail: a virtualenv, ``node_modules``, cargo's ``target/``, ...

git ignores them, so nothing a step changes in one is in any commit, any diff or any review; yet your own
`python`, `pytest` and `npm test` run their code the next time you start them in the project, outside any jail:
a ``.pth`` file in a virtualenv's site-packages runs at every start of that Python, an edited package or a
``node_modules/.bin`` script the next time it is used. So a task run in your own tree (`specd continue`) shows
each of them read-only to every jailed process, and the anthropic agent's file tools refuse to write in them.

Found at the tree's top and one folder down (``.venv``, ``venv``, ``web/node_modules``, ``.tox/py311``): a folder
named ``node_modules``, one that holds a ``pyvenv.cfg`` file (venv, virtualenv, uv, tox and nox make one) or a
``conda-meta`` folder (``conda create -p``); each workspace package's ``node_modules`` that package.json's
``workspaces`` or pnpm-workspace.yaml names; composer's ``vendor/``, bundler's ``vendor/bundle`` and cargo's
``target/``. A link is not followed: what it points to is shown, if at all, as a tool folder (``binds.tools``),
never by way of the tree. An environment a step moves away, or makes no longer one (its workspace left out of
package.json), blocks the run (``engine/machinery``): the next jail would not find it.

What stays writable: the caches build tools keep in ``node_modules`` (``.cache``, ``.vite``), as an empty,
private folder for the step that is gone after it (a poisoned build cache would end up in your next build); and
a folder you name yourself, relative to the tree, in ``SPECD_JAIL_WRITE`` (``SPECD_JAIL_WRITE=.venv``), for steps
that install what they add. A step made to install into a read-only one fails with "Read-only file system".

What a jailed build makes goes elsewhere too (``buildcaches``): Python's compiled files and cargo's target folder,
so a compiled file found in the tree's ``__pycache__`` after a step is not one the step's Python made, and it goes
(``specd/git/ignored.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from specd.system import lazyre
from specd.system.ownfiles import read_regular

NODE = "node_modules"
MARKS = ("pyvenv.cfg", "conda-meta")  # a file or folder that makes the folder holding it an environment
HOLDERS = (".tox", ".nox")  # folders that hold environments one folder down, whatever their names
NAMES = (NODE, ".venv", "venv")  # the names looked for one folder down
CACHES = (".cache", ".vite")  # node_modules' build caches: private and empty for each step
WRITE_ENV = "SPECD_JAIL_WRITE"
# Other languages' installs a tool of yours runs code from: composer's vendor/ (autoload.php) and bundler's
# vendor/bundle; never Go's vendor/ (modules.txt), which is the project's own, tracked code.
# cargo's target/ (Cargo.toml beside it) too: `cargo run` takes a binary there as up to date by its time. A jailed
# cargo builds elsewhere (``buildcaches``).
VENDORED = {"vendor": "vendor/autoload.php", "vendor/bundle": "vendor/bundle", "target": "Cargo.toml"}
MAX_WORKSPACES = 200
MAX_SETTINGS = 1 << 20
PNPM_ITEM = lazyre.lazy(r"""(?m)^[ \t]*-[ \t]*['"]?([^'"#\s]+)['"]?[ \t]*(?:#.*)?$""")  # - 'apps/*'  # a note


def found(root: Path) -> list[Path]:
    """The environments in the tree at ``root``, each a folder (not a link), at the top or one folder down."""
    try:
        with os.scandir(root) as entries:
            top = [(entry.name, entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    envs: list[str] = []
    for name, path in top:
        if name == ".git":
            continue
        if _is_env(name, path):
            envs.append(path)
            continue
        if name in HOLDERS:  # tox's and nox's environments, whatever their names
            try:
                with os.scandir(path) as entries:
                    below = [(e.name, e.path) for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
        else:  # a few names looked at, not a listing: a top folder may hold thousands of files
            below = [(sub, f"{path}/{sub}") for sub in NAMES if _folder(f"{path}/{sub}")]
        envs += [sub for sub_name, sub in below if _is_env(sub_name, sub)]
    go = os.path.lexists(f"{root}/vendor/modules.txt")
    envs += [f"{root}/{vendor}" for vendor, mark in VENDORED.items() if os.path.lexists(f"{root}/{mark}")
             and _folder(f"{root}/{vendor}") and not (vendor == "vendor" and go)]
    envs += [path for path in _workspaces(root) if path not in envs]
    return [Path(path) for path in sorted(set(envs))]


def _workspaces(root: Path) -> list[str]:
    """The ``node_modules`` of each workspace package that package.json's ``workspaces`` or pnpm-workspace.yaml
    names (``packages/*``: a pnpm package's ``node_modules/.bin`` holds scripts, not links); a ``**`` pattern is
    not followed, and at most ``MAX_WORKSPACES`` folders are looked at."""
    patterns: list[str] = []
    with contextlib.suppress(OSError, ValueError, AttributeError, TypeError):
        data = json.loads(read_regular(root / "package.json", MAX_SETTINGS))
        listed = data.get("workspaces") if isinstance(data, dict) else None
        listed = listed.get("packages") if isinstance(listed, dict) else listed
        patterns += [str(item) for item in listed or [] if isinstance(item, str)]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = read_regular(root / "pnpm-workspace.yaml", MAX_SETTINGS).decode()
        patterns += PNPM_ITEM.findall(text.partition("packages:")[2]) if "packages:" in text else []
    found: list[str] = []
    for pattern in patterns[:MAX_WORKSPACES]:
        if "**" in pattern or pattern.startswith(("/", "!")) or ".." in pattern.split("/"):
            continue
        for match in sorted(root.glob(pattern.rstrip("/")))[:MAX_WORKSPACES]:
            path = match / NODE
            ways = [path, *path.relative_to(root).parents]  # a link on the way would lead out of the tree
            if _folder(str(path)) and not any((root / way).is_symlink() for way in ways if str(way) != "."):
                found.append(str(path))
    return found[:MAX_WORKSPACES]


def _folder(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_env(name: str, path: str) -> bool:
    return name == NODE or any(os.path.lexists(f"{path}/{mark}") for mark in MARKS)


def binds(root: Path, env: Mapping[str, str]) -> list[str]:
    """bwrap flags, after the tree's own bind: each environment read-only, but those ``SPECD_JAIL_WRITE`` names
    relative to the tree; its existing build caches a private tmpfs."""
    args: list[str] = []
    mine = yours(root, env)
    for folder in found(root):
        if folder in mine:
            continue
        args += ["--ro-bind", str(folder), str(folder)]
        if folder.name == NODE:
            for cache in CACHES:
                if (folder / cache).is_dir() and not (folder / cache).is_symlink():
                    args += ["--tmpfs", str(folder / cache)]
    return args


def yours(root: Path, env: Mapping[str, str]) -> set[Path]:
    """The folders of the tree ``SPECD_JAIL_WRITE`` names by a relative path (absolute ones are ``binds``'s)."""
    entries = env.get(WRITE_ENV, "").split(os.pathsep)
    return {root / entry.strip("/") for entry in entries
            if entry and not Path(entry).is_absolute() and ".." not in Path(entry).parts}


def holding(root: Path, path: Path) -> Path | None:
    """The environment of ``root`` (resolved) that holds ``path`` (resolved), unless ``SPECD_JAIL_WRITE`` names it:
    the anthropic agent's file tools refuse to write there, as the jail does."""
    if not path.is_relative_to(root):
        return None
    mine = yours(root, os.environ)
    return next((env for env in found(root) if path.is_relative_to(env) and env not in mine), None)


def hint(output: str, root: Path) -> str:
    """Why a hook that failed on a read-only file system did: it wrote in one of the tree's environments ("" when
    its output names none of them), and the way to let it."""
    if "Read-only file system" not in output and "EROFS" not in output:
        return ""
    named = [str(env.relative_to(root)) for env in found(root) if str(env.relative_to(root)) in output]
    if not named:
        return ""
    return (f"; {named[0]} is read-only in the jail (an environment of the project's, which git ignores): a hook "
            f"that installs into it needs it in SPECD_JAIL_WRITE, relative to the project (SPECD_JAIL_WRITE="
            f"{named[0]})")


WHY = ("git ignores it, so no review would see a change here, and your own python, pytest or npm runs its code "
       "outside any jail; install dependencies yourself, or name the folder in SPECD_JAIL_WRITE (relative to the "
       "project) for steps that install")
