"""`specd status`.

Start-up is most of what `status TASK` costs, so this module imports only click at the top: the pipeline,
the run state and rich are imported where used, and a piped or --json `status TASK` whose inputs have not
changed prints the answer it printed before (specd/tasks/readmodel/) without loading any of them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from specd.commands.envelope import note_task
from specd.commands.temporal_flags import temporal_options

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project


def _complete_tasks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from specd.commands.common import complete_tasks

    return complete_tasks(ctx, param, incomplete)


@click.command()
@click.argument("task", required=False, shell_complete=_complete_tasks, callback=note_task)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--graph", "as_graph", is_flag=True, help="Print the task graph (who needs whom) instead.")
@click.option("--mermaid", is_flag=True, help="With --graph: print it as a Mermaid flowchart.")
@temporal_options
@click.pass_context
def status(ctx: click.Context, /, task: str | None, as_json: bool, as_graph: bool, mermaid: bool,
           **temporal: str | None) -> int:
    """Show every task's status, next step and phase, or one TASK in detail.

    Statuses: NOT_STARTED, IN_PROGRESS, WAITING_FOR_HUMAN, BLOCKED, COMPLETE,
    FAILED, CANCELLED, ABORTED. A live run shows its pid and how long ago its
    agent last showed activity; `stalled` when that is longer than
    SPECD_STALL_SECONDS (default 120). A run whose process died is reported
    as such. One TASK also shows the remaining plan under the pipeline file
    as it is now. Each task shows the tasks it needs (depends_on) and
    whether it is ready; --graph prints the whole graph.
    """
    if mermaid and not as_graph:
        raise click.UsageError("--mermaid goes with --graph")
    memo = not as_graph and not any(temporal.values()) and (as_json or not sys.stdout.isatty())
    if memo:
        from specd.tasks import readmodel

        root = readmodel.project_root((ctx.find_root().obj or {}).get("project_dir"))
        kept = readmodel.answer(root, task) if task else readmodel.printed_listing(root)
        # nothing it was worked out from has changed: the same answer, and no pipeline
        if kept is not None and kept["json" if as_json else "out"] is not None:
            for line in kept["err"]:
                click.echo(line, err=True)
            click.echo(kept["json" if as_json else "out"])
            return 0
    from specd.commands.common import in_project, project_from, warn

    project = in_project(project_from(ctx))
    before: Any = None  # the marks of what the answer is worked out from, taken before anything is read
    if task and memo:
        from specd.executors.temporal import record

        before = readmodel.answer_inputs(project, task, record.watched(project))
    elif memo:
        before = readmodel.listing_inputs(project)
    from specd.tasks import graph
    from specd.tasks.locate import branch, locate
    from specd.tasks.secrets import load_project_secrets
    from specd.tasks.status import all_status, pipeline_or_problem, project_notes, task_status

    load_project_secrets(project.root)  # task output shown here may hold .env values
    config, broken = pipeline_or_problem(project)
    notes = [*project_notes(project), *([broken] if broken else [])]
    warn(notes)  # stderr: --json output stays one document
    if as_graph:
        return _graph(project, config, broken, mermaid, as_json, temporal)
    data: dict[str, Any] | list[dict[str, Any]]
    asked = any(temporal.values())  # Temporal named by flag: its copy is shown, wherever the task lives here
    if task and asked and (remote := _on_temporal(project, task, broken, temporal)) is not None:
        data = remote
    elif task and (where := locate(project, task)) != project:  # running in its worktree: its live folder is there
        there, broken_there = pipeline_or_problem(where)
        data = task_status(where, task, there, broken=broken_there) | {"branch": branch(task)}
        if before is not None and not data.get("running"):
            _remember(project, task, before, there, data, notes, temporal, placed=True)
    elif task and not asked and (remote := _on_temporal(project, task, broken, temporal)) is not None:
        data = remote  # run by Temporal workers: what they pushed, and the workflow's state
    else:
        keep: list[Any] = []  # each row's folder and signature, when the status index holds it
        data = (task_status(project, task, config, broken=broken) if task
                else all_status(project, config, broken, full=as_json, keep=keep))  # a table reads what it shows
        if before is not None and isinstance(data, dict) and not data.get("running"):
            _remember(project, data["task"], before, config, data, notes, temporal)
    if isinstance(data, list):
        from specd.commands.temporal import listing_on_temporal

        if data and listing_on_temporal(project, data, lambda p, name: task_status(p, name, broken=broken),
                                        temporal):
            from specd.tasks import readmodel

            keep = []  # the rows of tasks on Temporal come from its server, which no mark watches
            readmodel.forget_listing(project)
        problem = graph.annotate(data)  # after Temporal's rows: who is ready follows what the workers pushed
        # an ERROR row says only that its files do not load: which file, where, and the fix go beside the table
        said = [*([problem] if problem else []),
                *(f"task {row['task']} does not load: {row['reason']}" for row in data
                  if row.get("status") == "ERROR" and row.get("reason"))]
        warn(said)
        if data and (memo or not sys.stdout.isatty() or as_json):
            return _listing(project, data, as_json, before, config, keep, [*notes, *said])
    if as_json:
        from specd.commands.envelope import emit

        emit(task, **{k: v for k, v in data.items() if k != "task"})  # type: ignore[union-attr]
        return 0
    if data and not sys.stdout.isatty():
        from specd.commands.terminal.plain import task_text
        from specd.redact import redact

        # piped: plain text scripts can read, and no rich to import (a third of the start-up)
        click.echo(redact(task_text(data)))  # type: ignore[arg-type]
        return 0
    from specd.commands.terminal.status import render_task, render_tasks

    if isinstance(data, list):
        render_tasks(data, project.tasks_dir)
    else:
        from specd.tasks.timing import step_seconds

        # bars of time and cost per step, only where a person looks: piped output stays as it was
        render_task(data, step_seconds(locate(project, data["task"]), data["task"]) if sys.stdout.isatty() else None)
        if data.get("temporal"):
            run = data["temporal"]
            click.echo(f"  on Temporal: workflow {run['workflow_id']} "
                       f"{'running' if run['running'] else 'closed'} ({run['status']}), branch {data['branch']}; "
                       f"{run['ui']}")
    return 0


def _listing(project: Project, rows: list[dict[str, Any]], as_json: bool, before: Any,
             config: PipelineConfig | None, keep: list[Any], notes: list[str]) -> int:
    """Print the listing, piped (plain text) or --json, and keep what was printed while nothing changes."""
    from specd.commands.common import warning
    from specd.commands.terminal.plain import table
    from specd.redact import redact
    from specd.tasks import readmodel

    texts: dict[str, Any] = {"out": redact(table(rows)), "json": None, "err": [warning(note) for note in notes]}
    if as_json:
        from specd.commands.envelope import envelope
        from specd.tasks.readmodel.redaction import listing_json, redacted_list

        # only rows that may hold a secret are walked by redaction; a row a line
        texts["json"] = listing_json(envelope(None, tasks=redacted_list(rows)))
    click.echo(texts["json" if as_json else "out"])
    if len(keep) == len(rows):
        readmodel.remember_listing(project, before, config, keep, texts)
    return 0


def _remember(project: Project, task: str, before: Any, config: PipelineConfig | None, data: dict[str, Any],
              notes: list[str], temporal: dict[str, str | None], *, placed: bool = False) -> None:
    """Keep what this answer prints, plain and --json, for the next `status TASK` whose inputs are the same.
    ``placed``: the answer was read from the task's worktree (its home), with ``config`` the pipeline there."""
    from specd.commands.common import warning
    from specd.commands.envelope import document
    from specd.commands.terminal.plain import task_text
    from specd.executors.temporal import record
    from specd.redact import redact
    from specd.tasks import readmodel

    if not placed and _placing(project, task):
        return
    if record.maybe_in_use(project, task, temporal):
        from specd.commands.temporal import settings_from

        if settings_from(project, temporal, task) is not None:
            return  # Temporal is configured: its workflows may hold the task's truth, which no file here shows
    texts = {"out": redact(task_text(data)), "json": document(task, **{k: v for k, v in data.items() if k != "task"}),
             "err": [warning(note) for note in notes]}
    readmodel.remember_answer(project, task, before, config, texts)


def _on_temporal(project: Project, task: str, broken: str | None, temporal: dict[str, str | None],
                 ) -> dict[str, Any] | None:
    """The task as its Temporal workers pushed it, or None when Temporal does not hold it."""
    from specd.executors.temporal import record

    if not record.maybe_in_use(project, task, temporal):
        return None
    from specd.commands.temporal import status_on_temporal
    from specd.tasks.status import task_status

    return status_on_temporal(project, task, lambda p: task_status(p, task, broken=broken), temporal)


def _graph(project: Project, config: PipelineConfig | None, broken: str | None, mermaid: bool,
           as_json: bool, temporal: dict[str, str | None]) -> int:
    from specd.commands.temporal import listing_on_temporal
    from specd.commands.terminal import graph as drawing
    from specd.redact import redact
    from specd.tasks import graph
    from specd.tasks.status import all_status, task_status

    edges = graph.load(project)  # an unknown name or a cycle is bad input here: the graph cannot be drawn
    rows = all_status(project, config, broken, full=False)
    listing_on_temporal(project, rows, lambda p, name: task_status(p, name, broken=broken), temporal)  # as listed
    statuses = {str(row["task"]): str(row["status"]) for row in rows}
    if as_json:  # the nodes as data; with --mermaid, the flowchart's text beside them
        from specd.commands.envelope import emit

        extra: dict[str, Any] = {"mermaid": redact(drawing.mermaid(edges, statuses))} if mermaid else {}
        emit(None, graph=drawing.nodes(edges, statuses), **extra)
        return 0
    click.echo(redact(drawing.mermaid(edges, statuses) if mermaid else drawing.text(edges, statuses)))
    return 0


def _placing(project: Project, task: str) -> bool:
    """Whether the task's home is a worktree while its answer comes from the main tree: `specd run` is making that
    worktree. What ends that moment (the branch, the worktree) is watched by no kept answer, so none is kept."""
    from specd.errors import SpecdError
    from specd.tasks import home

    try:
        found = home.read(project, task)
    except SpecdError:
        return True
    return found is not None and found.kind == "worktree"
