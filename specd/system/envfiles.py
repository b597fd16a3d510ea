"""A project's ``.env*`` files: the settings files at its root that hold keys and passwords.

Two parts of specd read the same list: redaction masks their values in everything specd writes or prints
(``specd.tasks.secrets``), and the jail shows each of them to the agent and its commands as an empty file
(``specd.system.jail``), since what an agent reads goes to the model untouched. A ``.env/`` virtualenv is a
folder, not one of them; templates (``.env.example``, ``.env.sample``, ...) hold no values and stay readable,
so an agent can still document a new setting there.
"""

from __future__ import annotations

import os
from pathlib import Path

TEMPLATES = (".example", ".sample", ".template", ".dist")


def env_files(root: Path) -> list[Path]:
    """``.env``, ``.env.local``, ``.env.production``, ... at the project root, templates included."""
    try:
        with os.scandir(root) as entries:
            return sorted(Path(e.path) for e in entries if e.name.startswith(".env") and e.is_file())
    except OSError:
        return []


def hidden_from_agents(root: Path) -> list[Path]:
    """The ``.env*`` files the jail shows as empty: all but the templates."""
    return [path for path in env_files(root) if is_hidden(root, path)]


def is_hidden(root: Path, resolved: Path) -> bool:
    """Whether ``resolved`` (symlinks resolved) is one of ``root``'s ``.env*`` files kept from agents."""
    name = resolved.name
    return (resolved.parent == root and name.startswith(".env") and not name.endswith(TEMPLATES)
            and resolved.is_file())
