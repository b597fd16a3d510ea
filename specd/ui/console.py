"""One shared rich console per stream, created on first use."""

from __future__ import annotations

from functools import cache

from rich.console import Console


@cache
def out() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:  # piped output: do not cut names at rich's 80-column default
        console.width = 160
    return console


@cache
def err() -> Console:
    return Console(stderr=True, highlight=False)
