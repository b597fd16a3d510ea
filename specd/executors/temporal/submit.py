"""`specd run --executor temporal`: one workflow per task of the closure, started or attached to, never twice.

A task COMPLETE in this tree needs no workflow. A task whose workflow runs is attached to; one whose workflow
ended COMPLETE, CANCELLED or FAILED is final (as with the local executor); any other (BLOCKED, a need that did
not finish) gets a new run of the same workflow id, which goes on from the task branch. A task that lives on this
machine is refused, unless it is named with ``--move`` (move.py): then it moves, with its history.
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, replace
from typing import Any

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from specd.errors import TaskError
from specd.executors.results import current_status, targets
from specd.executors.temporal import budget, lookup, move, record, search, seed
from specd.executors.temporal.ids import branch, repo_key, workflow_id
from specd.executors.temporal.settings import DEFAULT_NAMESPACE, DEFAULT_QUEUE, Settings
from specd.executors.temporal.steps import label
from specd.executors.temporal.workflow import NAME
from specd.tasks import graph as graphs
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import task_status

FINAL = ("COMPLETE", "CANCELLED", "FAILED")


@dataclass(frozen=True)
class Options:
    mode: str | None = None
    agent: str | None = None
    max_cost: float | None = None
    jobs: int | None = None  # the run's -j: at most this many of its tasks run a step at once, across workers
    move: bool = False  # the named tasks that live on this machine move to Temporal, with their history


@dataclass(frozen=True)
class Submitted:
    task: str
    workflow_id: str
    how: str  # started | moved | attached | final | done-here
    status: str = ""
    said: tuple[str, ...] = ()  # what else happened to it (a task that moved: its worktree removed)


async def submit(client: Client, project: Project, settings: Settings, names: list[str],
                 options: Options) -> tuple[str, list[Submitted]]:
    with contextlib.ExitStack() as hold:  # the locks of the tasks that move, until their home has moved
        return await _submit(client, project, settings, names, options, hold)


async def _submit(client: Client, project: Project, settings: Settings, names: list[str], options: Options,
                  hold: contextlib.ExitStack) -> tuple[str, list[Submitted]]:
    graph = graphs.load(project)
    known: dict[str, str] = {}  # each status read once: by targets() when no task is named, else here
    order = graphs.closure(graph, targets(project, names, graph, known=known))
    key = repo_key(project.root)
    present = seed.remote_heads(project, settings.remote)
    done_here = {t for t in order if branch(t) not in present
                 and (known[t] if t in known else current_status(project, t)) == "COMPLETE"}
    out: list[Submitted] = []
    jobs: list[dict[str, Any]] = []
    leaving: dict[str, move.Leaving] = {}
    for task in order:
        wid = workflow_id(key, task)
        if task in done_here:
            out.append(Submitted(task, wid, "done-here", "COMPLETE"))
            continue
        here = _here(project, task) if options.move and task in names else None  # the tasks asked to move
        found = await lookup.state(client, key, task)
        if here is not None:
            if found is not None and found["running"]:
                raise TaskError(f"task {task!r} lives on this machine, and its workflow {wid} runs on Temporal too",
                                fix=f"`specd cancel {task} --temporal {settings.address}` stops that one (this "
                                    "clone's copy stays), then move it again")
            leaving[task] = going = move.leaving(project, task, here, hold)
            if going.commit is not None:
                move.push(project, settings.remote, going)
            else:
                seed.seed(project, settings.remote, task, present)
        elif found is not None and found["running"]:
            out.append(Submitted(task, wid, "attached", str(found["status"])))
            continue
        elif found is not None and found["status"] in FINAL:
            out.append(Submitted(task, wid, "final", str(found["status"])))
            continue
        else:
            _not_here(task, _here(project, task), settings)
        # the first step's name, when the branch holds the task as these files do: the workflow needs no activity
        # to read it there (it names the step's activity, nothing more: the worker runs what the branch says)
        first = label(task_status(project, task).get("next")) if task not in leaving and seed.seed(
            project, settings.remote, task, present) == "tree" else None
        jobs.append({
            # mode and agent as asked, for the record: a worker refuses them unless they are its own settings,
            # and the run's --max-cost travels as "budget", which only ever lowers what a worker allows
            "task": task, "key": key, "mode": options.mode, "agent": options.agent,
            "needs": [n for n in graph.get(task, ()) if n not in done_here],
            "dependants": [workflow_id(key, t) for t in order if task in graph.get(t, ())],
            "heartbeat_timeout": settings.heartbeat_timeout, **({"step": first} if first else {})})
        out.append(Submitted(task, wid, "moved" if task in leaving else "started"))
    _across_the_run(project, settings, options, jobs)
    if jobs and await search.ensure(client, settings.namespace):
        for job in jobs:
            job["search"] = True
    for job in jobs:
        await client.start_workflow(NAME, job, id=workflow_id(key, job["task"]), task_queue=settings.task_queue,
                                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                                    memo={"status": "SUBMITTED", "reason": ""}, rpc_timeout=lookup.RPC)
    for job in jobs:  # its home, unless it has one: a task run here already is not moved by this (see home.py)
        wid = workflow_id(key, job["task"])
        if job["task"] in leaving:  # named with --move: its home is the workflow now
            said = tuple(move.arrived(project, leaving[job["task"]], settings.address, wid))
            out = [replace(item, said=said) if item.task == job["task"] else item for item in out]
        else:
            home.settle(project, job["task"], home.Home("temporal", address=settings.address, workflow_id=wid))
    record.save(project, settings, [s.task for s in out if s.how != "done-here"], key)
    return key, out


def _here(project: Project, task: str) -> home.Home | None:
    """The task's home when it is on this machine (the main tree or its worktree), else None."""
    found = home.read(project, task) or home.infer(project, task)
    return found if found is not None and found.kind != "temporal" else None


def _not_here(task: str, found: home.Home | None, settings: Settings) -> None:
    """A task that already runs on this machine (its home is the main tree or its worktree) is not submitted:
    a workflow would make a second copy of it. Moving it is the user's explicit act, said in the fix."""
    if found is None:
        return
    where = "the main tree" if found.kind == "main" else f"worktree {found.path} (branch {found.branch})"
    raise TaskError(f"task {task!r} already runs on this machine, in {where}; a workflow would be a second copy "
                    "of it", fix=f"go on here (`specd continue {task}` or `specd run {task}`); or move it to Temporal "
                                 f"with its history: stop it if it runs, then `{_moving(task, settings)}`")


def _moving(task: str, settings: Settings) -> str:
    """The command that moves ``task`` to the Temporal these settings name, pasted as it is."""
    given = {"--temporal": settings.address, "--namespace": settings.namespace, "--task-queue": settings.task_queue,
             "--remote": settings.remote}
    usual = {"--namespace": DEFAULT_NAMESPACE, "--task-queue": DEFAULT_QUEUE, "--remote": "origin"}
    flags = [f"{flag} {shlex.quote(value)}" for flag, value in given.items() if value != usual.get(flag)]
    return f"specd run {task} --executor temporal {' '.join(flags)} --move"


def _across_the_run(project: Project, settings: Settings, options: Options, jobs: list[dict[str, Any]]) -> None:
    """What ties the run's tasks together: its budget (--max-cost caps the sum) and its -j (task i starts once
    task i-N settled, so at most N of them run a step at once)."""
    plan = budget.plan(project.root, settings.remote, options.max_cost, [job["task"] for job in jobs])
    for i, job in enumerate(jobs):
        if plan is not None:
            job["budget"] = plan
        if options.jobs is not None:
            job["after"] = jobs[i - options.jobs]["task"] if i >= options.jobs else None
            job["next"] = [workflow_id(job["key"], jobs[i + options.jobs]["task"])] \
                if i + options.jobs < len(jobs) else []
