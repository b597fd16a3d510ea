"""Tasks another clone submitted to Temporal, found there before this clone runs one as a second copy.

A clone records what it submitted (``record``) and where each task lives (``tasks/home.py``), and another clone
sees neither: it pulled the task with the main branch, never run. So before a task's first run here (no home
recorded, nothing on disk placing it), the project's Temporal, when one is named (SPECD_TEMPORAL_*, or the
`temporal` block of `.specd/config.json` that every clone shares), is asked for the task's workflow by its id,
which is the same in every clone. A workflow that still runs has the task: it is left to it, with the commands
that answer it or bring it here. A closed one, or none, lets the task run here.

Asking costs a connection, so it is made only for tasks that never ran here, only when Temporal is named, and
once for all of a `specd run`'s tasks. When Temporal cannot be reached the task runs here, and that is said: a
server that is down must not stop every local run.
"""

from __future__ import annotations

import os
from typing import Any

from specd.errors import SpecdError, TaskError
from specd.git.publish import LEASE
from specd.tasks import home
from specd.tasks.project import Project, read_settings

ASK = 5.0  # seconds a first run waits for Temporal's answer before it runs anyway (a server down refuses at once)


def first_runs(project: Project, tasks: list[str]) -> list[str]:
    """Of ``tasks``, those nothing in this clone places yet: no home recorded, no run on disk, not submitted."""
    found = []
    for task in tasks:
        try:
            if home.read(project, task) is None and home.infer(project, task) is None:
                found.append(task)
        except SpecdError:  # a record or a placement that is wrong is said by the verb that acts on it
            continue
    return found


def running(project: Project, tasks: list[str]) -> tuple[dict[str, TaskError], str]:
    """Each of ``tasks`` (first runs here, see ``first_runs``) whose workflow still runs on the project's Temporal,
    with the error that refuses running it here; and what to say when Temporal could not be asked ("" if it was,
    or is not named)."""
    address, states, said = _ask(project, tasks)
    return {task: _refusal(task, address, state) for task, state in states.items()
            if state is not None and state["running"]}, said


def submitted(project: Project, task: str) -> str | None:
    """The address of the Temporal that holds a workflow for ``task`` (running or ended), submitted from another
    clone, when nothing in this clone places the task; None otherwise. `specd run TASK --move` brings it from there."""
    if not first_runs(project, [task]):
        return None
    address, states, _ = _ask(project, [task])
    return address if states.get(task) is not None else None


def _ask(project: Project, tasks: list[str]) -> tuple[str, dict[str, dict[str, Any] | None], str]:
    """(the address asked, each task's workflow state or None, what to say when it could not be asked)."""
    if not tasks or not _named(project):
        return "", {}, ""  # and a local run imports nothing of Temporal's
    from specd.executors.temporal.signals import settings_from

    try:
        settings = settings_from(project, {})
    except SpecdError:
        return "", {}, ""  # the settings are wrong: every Temporal verb says how; a local run needs none of them
    from specd.executors.temporal import available

    if settings is None or not available():
        return "", {}, ""
    import asyncio

    try:
        return settings.address, asyncio.run(asyncio.wait_for(_states(settings, project, tasks), ASK)), ""
    except (SpecdError, TimeoutError) as exc:
        why = exc.message if isinstance(exc, SpecdError) else f"no answer in {ASK:.0f} s"
        return settings.address, {}, (f"could not ask Temporal at {settings.address} whether another clone "
                                      f"submitted {', '.join(tasks)} ({why}); running here")


def _named(project: Project) -> bool:
    """Whether a Temporal is named for the project: a SPECD_TEMPORAL_* variable, or config.json's block. Never for a
    run a worker started for its workflow's step (it holds the workflow's lease): that workflow is the task's one
    copy, and its first step runs in the worker's own clone, where nothing places the task yet."""
    if os.environ.get(LEASE):
        return False
    if any(name.startswith("SPECD_TEMPORAL_") for name in os.environ):
        return True
    try:
        return "temporal" in read_settings(project)
    except SpecdError:  # said by whatever reads it for the run
        return False


async def _states(settings: Any, project: Project, tasks: list[str]) -> dict[str, dict[str, Any] | None]:
    import asyncio

    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key

    client = await lookup.connect(settings)
    key = repo_key(project.root)
    # asked side by side: `specd run --all` may ask about every task the project has, over the network
    return dict(zip(tasks, await asyncio.gather(*(lookup.state(client, key, task) for task in tasks)), strict=True))


def _refusal(task: str, address: str, state: dict[str, Any]) -> TaskError:
    now = state.get("status") or "IN_PROGRESS"
    return TaskError(f"task {task!r} runs on Temporal at {address} ({now}), submitted from another clone; running "
                     "it here too would make a second copy",
                     fix=f"follow it with `specd status {task}` and answer it with `specd approve {task}` (each "
                         f"asks that Temporal); to run it here instead, `specd cancel {task}`, then `specd run "
                         f"{task} --move`, which brings it here with every step its workers finished")


def refuse_first_run(project: Project, task: str) -> str:
    """Raise the refusal when ``task``'s first run here would be a second copy of a workflow another clone
    submitted; else return what to say first ("" when nothing)."""
    refused, said = running(project, first_runs(project, [task]))
    if task in refused:
        raise refused[task]
    return said
