"""The Temporal side of the verbs: `specd run --executor temporal`, and answering, cancelling and showing a task
whose truth is a workflow (`specd worker` is specd.commands.worker). temporalio is imported only once a command
needs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from specd.commands.temporal_flags import temporal_options as temporal_options  # verbs import it from here
from specd.errors import EXIT_FAILED, EXIT_OK, UsageError, settled_exit

# Answering and cancelling by signal, and the settings in force, are the executor's (`specd mcp` signals too).
from specd.executors.temporal.signals import answer_on_temporal as answer_on_temporal
from specd.executors.temporal.signals import settings_from as settings_from
from specd.tasks.project import Project


def run_on_temporal(project: Project, names: list[str], options: dict[str, Any], *, wait: bool,
                    as_json: bool) -> int:
    from specd.executors.temporal import require

    require()
    import asyncio
    settings = settings_from(project, options)
    if settings is None:
        raise UsageError("--executor temporal needs to know where Temporal is",
                         fix="pass --temporal HOST:PORT (or set SPECD_TEMPORAL_ADDRESS)")
    from specd.commands.terminal.many import RunView
    from specd.executors.temporal.follow import follow
    from specd.executors.temporal.lookup import connect
    from specd.executors.temporal.submit import Options, submit

    run_options = Options(options.get("mode"), options.get("agent_spec"), options.get("max_cost"), options.get("jobs"),
                          bool(options.get("move")))

    async def go() -> list[Any] | None:
        client = await connect(settings)
        key, submitted = await submit(client, project, settings, names, run_options)
        for item in submitted:
            line = {"kind": "submitted", "how": item.how, "workflow_id": item.workflow_id,
                    "ui": settings.ui_link(item.workflow_id)}
            if as_json:
                click.echo(__import__("json").dumps({"task": item.task, **line, **({"said": list(item.said)}
                                                                                    if item.said else {})}))
            else:
                click.echo(f"{item.task}: {item.how} {item.workflow_id}  {line['ui']}")
                for said in item.said:
                    click.echo(f"{item.task}: {said}")
        if not wait:
            return None
        view = RunView(as_json=as_json)
        results = await follow(client, project, key, submitted, view)
        view.close(results)
        return results

    results = asyncio.run(go())
    if results is None:
        return EXIT_OK
    statuses = {r.status for r in results}
    if statuses & {"BLOCKED", "FAILED"}:
        return EXIT_FAILED
    return settled_exit(statuses)


def move_here(project: Project, names: list[str], options: dict[str, Any], *, as_json: bool) -> None:
    """`specd run TASK --move`: each named task that lives on Temporal, its workflow ended, brought here with its
    history (``move.come_here``); a task that lives here already is said to, and left as it is."""
    from specd.executors.temporal import elsewhere
    from specd.tasks import home
    from specd.tasks.task import existing_task

    for task in names:
        existing_task(project, task)  # a mistyped name is said as such
        found = home.current(project, task)
        if found.kind == "main" and (address := elsewhere.submitted(project, task)):
            found = home.Home("temporal", address=address)  # another clone submitted it: its workflow is there
        if found.kind != "temporal":
            where = "your tree" if found.kind == "main" else found.path
            said = f"lives on this machine already ({where}); nothing moved"
        else:
            said = _come_here(project, task, found, options)
        if as_json:
            click.echo(__import__("json").dumps({"task": task, "kind": "moved", "message": said}))
        else:
            click.echo(f"{task}: {said}", err=True)


def _come_here(project: Project, task: str, found: Any, options: dict[str, Any]) -> str:
    from specd.executors.temporal import require

    require()
    import asyncio

    from specd.executors.temporal import lookup, move
    from specd.executors.temporal.ids import repo_key, workflow_id

    settings = settings_from(project, options, task) or settings_from(project, {"temporal_address": found.address})
    if settings is None:
        raise UsageError(f"task {task!r} runs on Temporal, and this clone does not know where",
                         fix=f"pass --temporal HOST:PORT: `specd run {task} --move --temporal HOST:PORT`")

    async def ask() -> dict[str, Any] | None:
        return await lookup.state(await lookup.connect(settings), repo_key(project.root), task)

    state = asyncio.run(ask())
    if state is not None and state["running"]:
        wid = workflow_id(repo_key(project.root), task)
        raise UsageError(f"task {task!r} still runs on Temporal (workflow {wid}, {state['status']}); bringing it "
                         "here now would make a second copy",
                         fix=f"`specd cancel {task}` stops it (it ends CANCELLED on its branch), then `specd run "
                             f"{task} --move`")
    return move.come_here(project, task, settings.remote)


def status_on_temporal(project: Project, task: str, look: Callable[[Project], dict[str, Any]],
                       options: dict[str, Any]) -> dict[str, Any] | None:
    """The task as its workers pushed it, plus its workflow's state; None when it does not run on Temporal."""
    from specd.executors.temporal import record

    if not any(options.values()) and record.lives_here(project, task):
        return None  # moved here from Temporal: this copy is its truth (asked for by flag, Temporal's is shown)
    settings = settings_from(project, options, task)
    if settings is None:
        return None
    from specd.executors.temporal import require

    require()
    import asyncio

    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key

    async def go() -> dict[str, Any] | None:
        client = await lookup.connect(settings)
        return await lookup.state(client, repo_key(project.root), task)

    found = asyncio.run(go())
    if found is None:
        return None
    return _on_temporal(project, settings, task, look, found)


def _on_temporal(project: Project, settings: Any, task: str, look: Callable[[Project], dict[str, Any]],
                 found: dict[str, Any], fetched: set[str] | None = None) -> dict[str, Any]:
    """The task as its workers last pushed it, with its workflow's state, and the command that answers it.
    ``fetched``: the tasks whose branch a listing brought here already (``pushed.fetch_all``)."""
    from specd.executors.temporal import pushed
    from specd.executors.temporal.ids import repo_key, workflow_id
    from specd.executors.temporal.shown import as_workflow_says

    pushed_one = None
    if fetched is None or task in fetched:
        pushed_one = pushed.read(project, settings.remote, task, look, fetched=fetched is not None)
    data = pushed_one or {"task": task, "status": found["status"]}
    data = as_workflow_says(task, data, found)
    wid = workflow_id(repo_key(project.root), task)
    return data | {"branch": f"specd/{task}", "temporal": {
        "workflow_id": wid, "running": found["running"], "status": found["status"], "reason": found["reason"],
        "step": found["step"], "ui": settings.ui_link(wid)}}


def listing_on_temporal(project: Project, rows: list[dict[str, Any]], look: Callable[[Project, str], dict[str, Any]],
                        options: dict[str, Any]) -> bool:
    """Each row of a task run on Temporal (submitted from this clone, or every row given --temporal) as
    `specd status TASK` shows it: what its workers pushed. True when any row changed."""
    from specd.executors.temporal import record

    asked, recorded = any(options.values()), record.load(project)
    names = [row["task"] for row in rows
             if asked or (row["task"] in recorded and not record.lives_here(project, row["task"]))]
    if not names:
        return False
    from specd.commands.common import warn
    from specd.executors.temporal import INSTALL, available, require

    if not asked and not available():
        warn([f"{', '.join(names)} run on Temporal, and temporalio is not installed (`{INSTALL}`): their rows show "
              "this clone's copy, not what the workers pushed"])
        return False
    require()
    import asyncio

    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key

    settings = {name: settings_from(project, options, name) for name in names}

    unreached: dict[str, tuple[str, list[str]]] = {}  # address: why, and the tasks it runs

    async def go() -> dict[str, dict[str, Any]]:
        clients: dict[tuple[str, str], Any] = {}
        asking: dict[str, Any] = {}  # each task's workflow, asked at once: a round trip to the server in all
        for name in names:
            where = settings[name]
            if where is None:
                continue
            at = (where.address, where.namespace)
            if where.address in unreached:
                unreached[where.address][1].append(name)
                continue
            try:
                clients[at] = clients.get(at) or await lookup.connect(where)
            except lookup.TemporalError as exc:
                if asked:  # asked for by flag: refused as `status TASK --temporal` is
                    raise
                unreached[where.address] = (exc.message, [name])
                continue
            asking[name] = clients[at]
        states = await asyncio.gather(*(lookup.state(client, repo_key(project.root), name)
                                        for name, client in asking.items()))
        return {name: state for name, state in zip(asking, states, strict=True) if state is not None}

    found = asyncio.run(go())
    # the listing still answers: those rows are this clone's copy, and it says so
    warn([f"{why}; the rows of {', '.join(tasks)} show this clone's copy, not what the workers pushed"
          for why, tasks in unreached.values()])
    fetched = _fetched(project, {name: settings[name] for name in found})
    for row in rows:
        if row["task"] in found:
            name = row["task"]
            data = _on_temporal(project, settings[name], name, _one(look, name), found[name],
                                fetched.get(settings[name].remote))
            row.update({k: v for k, v in data.items() if k in row and k not in LOCAL} | {
                "branch": data["branch"], "temporal": data["temporal"], "updated_at": data.get("updated_at")})
    return bool(found)


def _fetched(project: Project, settings: dict[str, Any]) -> dict[str, set[str] | None]:
    """Each remote's task branches fetched at once (``pushed.fetch_all``): the tasks it has, by remote."""
    from specd.executors.temporal import pushed

    remotes: dict[str, list[str]] = {}
    for name, where in settings.items():
        remotes.setdefault(where.remote, []).append(name)
    return {remote: pushed.fetch_all(project, remote, names) for remote, names in remotes.items()}


def _one(look: Callable[[Project, str], dict[str, Any]], name: str) -> Callable[[Project], dict[str, Any]]:
    return lambda project: look(project, name)


LOCAL = ("task", "folder", "needs", "ready", "waits_for")  # what a listing row says of this clone, kept as is
