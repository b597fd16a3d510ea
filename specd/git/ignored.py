"""What a step leaves where git does not look: compiled Python removed, extensions and key files said.

A ``.pyc`` file is code Python runs in place of a source. One in ``__pycache__`` whose header names its source's
size and time is imported instead of that source; one with no source beside it (``pytest.pyc`` at the project's
top) is imported for its name ahead of the installed package by `python -m pytest` run there. Every Python
project's .gitignore lists them, so a step's is in no commit, no diff and no review, and your own next `pytest`
would run it as you, outside any jail. So when a step or hook ends, each compiled file git ignores that was made
or changed while it ran is removed (Python compiles the sources again), and the run says so once; so is a new one
git would take, where the .gitignore lists no ``*.pyc`` (the recorder passes those in, and commits none). A compiled
extension (``.so``) is said, not removed: a step may build one on purpose. So is a new file git ignores that a
tool of yours loads settings from and specd never commits (``.env``, ``.npmrc``): the jail shows an existing one
empty and read-only, but not one that is not there yet; one that sets what runs code (an ``LD_PRELOAD``, npm's
``node-options``) holds the run instead (``loaders``).

git's own status finds them (``tree.take`` with ``ignored``): a folder git ignores whole is named once and not
walked, so this costs a look into each ``__pycache__`` folder and nothing in ``node_modules`` or a virtualenv
(those are read-only in the jail: ``system/environments.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from pathlib import Path

from specd.errors import listed
from specd.git.sources import SOURCES, fresh
from specd.system.envfiles import never_added

SUFFIXES = (".pyc", ".pyo")
EXTENSIONS = (".so", ".pyd")  # compiled extensions: said, not removed (a step may build one on purpose)
CACHE = "__pycache__"
# The step's start is the time of a file specd wrote as it opened (the recorder's baseline), from the same clock
# as a compiled file's: this is for a clock that steps back a little between the two.
SLACK_NS = 50_000_000


def after(top: Path, ignored: list[str], since_ns: int, label: str, held: Collection[str] = ()) -> list[str]:
    """When the step or hook ``label`` that opened at ``since_ns`` (0: unknown) ends, given what git ignores now
    (and the compiled files git would take: a .gitignore without ``*.pyc``): remove what it compiled (``sweep``) and
    say what it built (``extensions``), the key files it made and the source it left (but those ``held``: hidden
    by a rule of its own, or key files that set what runs code: ``hidden``), a line each."""
    if not since_ns or not ignored:
        return []
    swept, found = sweep(top, ignored, since_ns), extensions(top, ignored, since_ns)
    fresh = [path for path in ignored if not path.endswith("/") and _fresh(top / path, since_ns - SLACK_NS)]
    keys = [path for path in fresh if never_added(path.rpartition("/")[2]) and path not in held]
    code = [path for path in fresh if path.endswith(SOURCES) and path not in held]
    return [*([said(swept, label)] if swept else []), *([built(found, label)] if found else []),
            *([loaded(keys, label)] if keys else []), *([left(code, label)] if code else [])]


def written(path: Path) -> int:
    """When specd wrote ``path`` (the recorder's baseline, as a step opens), by the clock of its filesystem."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return time.time_ns() - SLACK_NS


def sweep(top: Path, ignored: list[str], since_ns: int) -> list[str]:
    """Remove the compiled files among ``ignored`` (paths git ignores, a folder ending in "/") made or changed
    since ``since_ns``; the paths removed, relative to ``top``."""
    removed: list[str] = []
    for path in ignored:
        if path.endswith("/"):
            if path.rstrip("/").rpartition("/")[2] != CACHE:
                continue
            try:
                with os.scandir(top / path) as entries:
                    names = [path + entry.name for entry in entries if entry.name.endswith(SUFFIXES)]
            except OSError:
                continue
        elif path.endswith(SUFFIXES):
            names = [path]
        else:
            continue
        removed += [name for name in names if _fresh(top / name, since_ns - SLACK_NS) and _remove(top / name)]
    return removed


def extensions(top: Path, ignored: list[str], since_ns: int) -> list[str]:
    """The compiled extensions among ``ignored`` made or changed since ``since_ns``: Python imports one ahead of a
    source of the same name, and git ignores them too. Kept (a step may build one on purpose), and said."""
    return [path for path in ignored if path.endswith(EXTENSIONS) and _fresh(top / path, since_ns - SLACK_NS)]


def _fresh(path: Path, since_ns: int) -> bool:
    return fresh(path, since_ns, folders=False)


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    return True


def said(removed: list[str], label: str) -> str:
    """The run's one line about what ``sweep`` removed after the step or hook ``label``."""
    shown = listed(removed)
    return (f"removed {len(removed)} compiled Python file{'s' if len(removed) != 1 else ''} made while "
            f"{label or 'the step'} ran ({shown}): Python runs such a file in place of a module's source, as you, at "
            "your next run here; a jailed Python compiles elsewhere, and yours compiles the sources again")


def built(found: list[str], label: str) -> str:
    """The run's one line about the extensions ``extensions`` found after the step or hook ``label``."""
    shown = listed(found)
    return (f"{label or 'the step'} made or changed {len(found)} compiled extension{'s' if len(found) != 1 else ''} "
            f"that git ignores ({shown}): no review sees {'them' if len(found) != 1 else 'it'}, and Python imports "
            "one ahead of a module's source; look before you run Python here, or build it again yourself")


def loaded(found: list[str], label: str) -> str:
    """The run's one line about settings files git ignores that the step or hook ``label`` made or changed."""
    return (f"{label or 'the step'} made or changed {listed(found)}, which git ignores and specd never commits: "
            "docker compose, pipenv and node --env-file load a .env, npm an .npmrc (one that sets what runs code, an "
            f"LD_PRELOAD say, holds the run instead); look at {'them' if len(found) != 1 else 'it'} before your next "
            "command here")


def left(found: list[str], label: str) -> str:
    """The run's one line about source files git ignores (by the project's own rules) that ``label`` left."""
    return (f"{label or 'the step'} made or changed {listed(found)}, source that git ignores by the project's own "
            f"rules, so no commit or review shows {'them' if len(found) != 1 else 'it'}: a settings module or a "
            "conftest.py there runs at your next run here; look before you run anything here")
