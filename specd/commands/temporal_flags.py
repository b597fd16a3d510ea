"""The flags that say where Temporal is, shared by every verb that can act on a task run there.

Apart from specd.commands.temporal so a verb gets them without importing that module (its commands and
helpers cost `specd status TASK` a few ms of start-up it rarely needs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def temporal_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed([
        click.option("--temporal", "temporal_address", metavar="HOST:PORT",
                     help="The Temporal frontend (or SPECD_TEMPORAL_ADDRESS, or temporal.address in config.json)."),
        click.option("--namespace", "temporal_namespace", metavar="NS", help="Temporal namespace (default: default)."),
        click.option("--task-queue", "temporal_queue", metavar="Q", help="Temporal task queue (default: specd)."),
    ]):
        func = option(func)
    return func
