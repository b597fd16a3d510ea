"""The values of a project's ``.env*`` files join the redaction set when the project is opened.

A value that exists only in ``.env`` never reaches the environment specd sees, so the name-based filter
in ``specd.redact`` cannot know it; yet an agent or hook that reads the file may print it. Every value at
least 8 characters long is masked, whatever its name: a false positive costs a few unreadable characters.
python-dotenv is imported only when a project has such a file, so commands on a project without one pay
nothing for it.
"""

from __future__ import annotations

import io
from pathlib import Path

from specd.redact import add_secrets
from specd.system.envfiles import env_files

MAX_BYTES = 1 << 20  # an .env file is a few lines; a huge one is not a settings file


__all__ = ["env_files", "load_project_secrets"]


def load_project_secrets(root: Path) -> int:
    """Add the values of ``root``'s ``.env*`` files to the redaction set; returns how many were read."""
    files = env_files(root)
    if not files:
        return 0
    import logging

    from dotenv import dotenv_values

    # A line it cannot parse is logged by python-dotenv; specd's screen is no place for that (or for its text).
    logging.getLogger("dotenv").setLevel(logging.CRITICAL)
    values: list[str] = []
    for path in files:
        try:
            with path.open("rb") as handle:
                text = handle.read(MAX_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue  # unreadable to us is unreadable to the agents we start as well
        for interpolate in (False, True):  # as written, and as a program loading it would see it
            values += [v for v in dotenv_values(stream=io.StringIO(text), interpolate=interpolate).values() if v]
    add_secrets(values)
    return len(values)
