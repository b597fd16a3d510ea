"""Which files in a part of the tree git does not show are source a tool of yours would run, and which are new.

Used for what a step hides from git (``hidden``: a rule git ignores as well; ``nested``: a repository of its own).
Source means a file a test runner collects or an interpreter imports from where it lies; a git folder met on the
way is never looked through (its objects are no source), but its settings are named when they are new: what its
config or a hook names runs whenever git runs there, your editor's git included.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from specd.system.environments import MARKS
from specd.system.ownfiles import DEEPEST, walk

GIT = ".git"
# Source a tool of yours runs from where it lies in the tree: a test runner collects it, Python imports it.
SOURCES = (".py", ".pyw", ".pth", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go", ".rs",
           ".rb", ".php", ".java", ".kt", ".kts", ".scala", ".sh", ".bash", ".pl")
PYTHON = (".py", ".pyw", ".pth")
# What an agent CLI of yours reads as your own instructions when it starts here (``instructions``).
INSTRUCTIONS = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md", ".cursorrules",
                ".windsurfrules", "copilot-instructions.md")
LOOK = 200_000  # entries looked through in a folder hidden whole; past that, the folder itself is held


def fresh(path: Path, since_ns: int, folders: bool = True) -> bool:
    """Whether ``path`` (not a folder, unless ``folders``) was made or changed since ``since_ns``: its change time,
    which nothing can set back, or a later modification time."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return (folders or not stat.S_ISDIR(st.st_mode)) and max(st.st_ctime_ns, st.st_mtime_ns) >= since_ns


def settings(dot: Path, since_ns: int) -> list[Path]:
    """What git runs from the git folder (or ``.git`` file) ``dot`` that was made or changed since ``since_ns``:
    its config and hooks (not the samples `git init` writes), or the ``.git`` file that points elsewhere."""
    if dot.is_symlink() or not dot.is_dir():
        return [dot] if fresh(dot, since_ns) else []
    try:
        hooks = [entry for entry in (dot / "hooks").iterdir() if not entry.name.endswith(".sample")]
    except OSError:
        hooks = []
    return [path for path in (dot / "config", *hooks) if fresh(path, since_ns, folders=False)]


def environment(top: Path, path: str) -> bool:
    """Whether ``path`` is in an environment (a folder holding ``pyvenv.cfg`` or ``conda-meta``), or is one."""
    parts = path.rstrip("/").split("/")
    return any((top.joinpath(*parts[:i]) / mark).exists() for i in range(1, len(parts) + 1) for mark in MARKS)


def code(top: Path, path: str, since_ns: int) -> list[str]:
    """``path`` when it is source made or changed since ``since_ns``; in a folder, that source in it, and the new
    settings of each git folder in it. In an environment, Python's own files are not source of the project's (pytest
    passes an environment by, and only its interpreter imports them), and one unchanged since ``since_ns`` (the jail
    showed it read-only, or it is yours) is not looked through."""
    full, env = top / path, environment(top, path)
    if not full.is_dir() or full.is_symlink():
        return [path] if full.is_file() and source(path, env) and fresh(full, since_ns) else []
    if env and since_ns and not fresh(full, since_ns):
        return []
    found: list[str] = []
    seen, envs = 0, [str(full)] if env else []
    for folder, dirs, files in walk(full, DEEPEST + 1):
        seen += len(files) + len(dirs)
        if seen > LOOK or folder.count(os.sep) - str(full).count(os.sep) > DEEPEST:
            return [f"{path}/"]  # too much (or too deep) to look through: the folder is held whole
        if GIT in dirs or GIT in files:  # git's objects are no source; what it runs there is
            found += [os.path.relpath(p, top) for p in settings(Path(folder) / GIT, since_ns)]
            dirs[:] = [name for name in dirs if name != GIT]
        if any((Path(folder) / mark).exists() for mark in MARKS):
            if since_ns and not fresh(Path(folder), since_ns):
                dirs.clear()
                continue
            envs.append(folder)
        inside_env = any(folder == root or folder.startswith(root + os.sep) for root in envs)
        rel = os.path.relpath(folder, top)
        found += [f"{rel}/{name}" for name in files
                  if source(name, inside_env) and fresh(Path(folder) / name, since_ns)]
    return sorted(found)


def source(name: str, env: bool) -> bool:
    return (name.endswith(SOURCES) and not (env and name.endswith(PYTHON))) or (name in INSTRUCTIONS and not env)
