"""A project's ``.env*`` files: the settings files that hold its keys and passwords.

Two parts of specd read them: redaction masks the values of those at the root in everything specd writes or
prints (``specd.tasks.secrets``), and the jail shows each of them, and those in the project's folders, to the
agent and its commands as an empty file (``specd.system.jail``), since what an agent reads goes to the model
untouched. A ``.env/`` virtualenv is a folder, not one of them; templates (``.env.example``, ``.env.sample``,
...) hold no values and stay readable, so an agent can still document a new setting there.
"""

from __future__ import annotations

import os
from pathlib import Path

TEMPLATES = (".example", ".sample", ".template", ".dist")
# Where nested .env files are looked for: a monorepo's apps/web/.env, not a dependency's copy of one.
DEPTH = 4
SKIP = frozenset({"node_modules", "venv", "__pycache__", "site-packages", "dist", "build", "target", "vendor"})
MAX_FOLDERS = 5000  # a bound on the walk, whatever the project's size


def env_files(root: Path, depth: int = 0, templates: bool = True) -> list[Path]:
    """``.env``, ``.env.local``, ``.env.production``, ... at the project root (the values redaction masks), and
    in its folders down to ``depth`` levels (never in dot-folders or the ``SKIP`` ones)."""
    found: list[Path] = []
    stack, walked = [(str(root), 0)], 0
    while stack and walked < MAX_FOLDERS:
        folder, level = stack.pop()
        walked += 1
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if (entry.name.startswith(".env") and (templates or not entry.name.endswith(TEMPLATES))
                            and entry.is_file()):
                        found.append(Path(entry.path))
                    elif (level < depth and not entry.name.startswith(".") and entry.name not in SKIP
                          and entry.is_dir(follow_symlinks=False)):
                        stack.append((entry.path, level + 1))
        except OSError:
            continue
    return sorted(found)


def hidden_from_agents(root: Path) -> list[Path]:
    """The ``.env*`` files the jail shows as empty: all but the templates, down to ``DEPTH`` levels."""
    return env_files(root, DEPTH, templates=False)


def is_hidden(root: Path, resolved: Path) -> bool:
    """Whether ``resolved`` (symlinks resolved) is a ``.env*`` file inside ``root`` kept from agents."""
    name = resolved.name
    return (name.startswith(".env") and not name.endswith(TEMPLATES) and resolved.is_relative_to(root)
            and resolved.is_file())
