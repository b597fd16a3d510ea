"""Who is answering on this machine: the project's git identity, else the login name.

A fresh machine (a CI runner, a new laptop) has no git identity; an answer must still work there and say
who gave it as well as the machine knows, so every failure here falls back rather than raises.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from specd.git.repo import git
from specd.state.checkpoint import Origin

KEYS = ("user.name", "user.email")


def who(root: Path) -> str:
    """"Name <email>" from git's config as seen in ``root`` (the repository's, then global and system),
    either half alone when only one is set, else the login name."""
    try:
        found = git(root, "config", "--get-regexp", r"^user\.(name|email)$")
    except OSError:  # no git, or the folder went away
        return login_name()
    values: dict[str, str] = {}
    for entry in found.stdout.splitlines() if found.returncode == 0 else ():
        key, _, value = entry.partition(" ")
        if key in KEYS and value.strip():
            values[key] = value.strip()  # the last one wins, as git's own lookup does
    name, email = values.get("user.name", ""), values.get("user.email", "")
    if name and email:
        return f"{name} <{email}>"
    return name or email or login_name()


def login_name() -> str:
    """The login name: $USER, then what the system says (LOGNAME, the password database)."""
    given = os.environ.get("USER", "").strip()
    if given:
        return given
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # a uid with no passwd entry (a bare container)
        return "unknown"


def here(via: str, root: Path) -> Origin:
    """An answer given on this machine, in the project at ``root`` (terminal, cli)."""
    return Origin(via, who(root))
