"""A run's transcripts are numbered in the order they were made: ``transcripts/<run_id>/<NNN>-<label>``.

The number has at least three digits and grows past 999 (a run of thousands of steps), so name order is not
the order made: ``1000-…`` sorts before ``101-…``. Everything that orders a run's transcripts uses ``key``.
A leaf module: the writer (``agents.proc``) and the readers (``tasks.follow``, ``tasks.status``) share it.
"""

from __future__ import annotations

import os


def number(name: str) -> int | None:
    """The number a transcript's name starts with, or None when it is not a numbered transcript."""
    head, dash, _ = name.partition("-")
    return int(head) if dash and len(head) >= 3 and head.isascii() and head.isdigit() else None


def key(path: os.PathLike[str] | str) -> tuple[int, str]:
    """Sort key: by number (what is not numbered first), then by name."""
    name = os.path.basename(path)  # noqa: PTH119 - str or Path alike
    found = number(name)
    return (-1 if found is None else found, name)
