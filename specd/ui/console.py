"""One shared rich console per stream, created on first use."""

from __future__ import annotations

from functools import cache

from rich.console import Console


@cache
def out() -> Console:
    return Console(highlight=False)


@cache
def err() -> Console:
    return Console(stderr=True, highlight=False)
