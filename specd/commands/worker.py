"""`specd worker`: run the tasks submitted to Temporal on this machine, the way this machine says.

Its own verb module, apart from specd.commands.temporal: it takes the run flags of `specd continue` (the mode,
--agent, --max-cost), and those come with the engine's imports, which approve and status need not pay for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from specd.commands.continue_ import mode_options
from specd.commands.envelope import emit, json_option
from specd.commands.temporal import settings_from, temporal_options
from specd.errors import EXIT_OK, UsageError


@click.command("worker")
@temporal_options
@click.option("--remote", required=True, metavar="URL", help="The shared repository tasks are pushed to.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="Where this worker keeps one clone per task (default: ~/.cache/specd/worker).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="How many steps this worker runs at once (default: the number of CPUs, at least 2).")
@mode_options("interactive", "the default, unless the run or the pipeline file says otherwise; a gate waits for "
                             "`specd approve`")
@click.option("--agent", "agent_spec", metavar="SPEC",
              help="The agent every task runs with here (default: the run's, else the pipeline file's).")
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD",
              help="The most a task's run may cost here (default: the run's, else the pipeline's budget); a "
                   "run's --max-cost can only lower it.")
@json_option("Print each of the worker's lines as a JSON object on stdout ({\"kind\": \"worker\", ...}), "
             "then one envelope when it stops.")
def worker(remote: str, workdir: Path | None, jobs: int | None, mode: str | None, agent_spec: str | None,
           max_cost: float | None, as_json: bool, **options: Any) -> int:
    """Run specd's Temporal activities on this machine: poll the task queue,
    keep a clone per task under DIR, run steps with this machine's agents and
    credentials, push each finished step to REMOTE. SIGTERM stops cleanly
    (a running step is run again on another worker).

    The agent, mode and --max-cost are this worker's own flags (or the run's
    and the committed pipeline file's): a job only names its task, and one
    asking for another agent or mode is refused."""
    from specd.executors.temporal import require

    require()
    import asyncio
    settings = settings_from(None, options)
    if settings is None:
        raise UsageError("the worker needs to know where Temporal is",
                         fix="pass --temporal HOST:PORT (or set SPECD_TEMPORAL_ADDRESS)")
    from specd.executors.temporal.settings import Behaviour
    from specd.executors.temporal.worker import serve

    folder = workdir or Path.home() / ".cache" / "specd" / "worker"

    def say(line: str) -> None:
        if as_json:
            click.echo(json.dumps({"kind": "worker", "message": line}))
        else:
            click.echo(line, err=True)

    own = Behaviour(agent=agent_spec, mode=mode, max_cost=max_cost)
    asyncio.run(serve(settings, own, remote, folder, jobs or max(2, os.cpu_count() or 2), say))
    if as_json:
        emit(None, indent=None, stopped=True)
    return EXIT_OK
