"""`specd status`.

Start-up is most of what `status TASK` costs, so this module imports only click at the top: the pipeline,
the run state and rich are imported where used, and a piped or --json `status TASK` whose inputs have not
changed prints the answer it printed before (specd/tasks/readmodel/) without loading any of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from specd.commands import status_kept as printed
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
    drawn = not (memo or as_graph or any(temporal.values()))  # on a terminal: what rich draws is kept too
    if memo or drawn:
        from specd.tasks import readmodel

        root = readmodel.project_root((ctx.find_root().obj or {}).get("project_dir"))
        form = "drawn" if drawn else "json" if as_json else "out"
        kept = readmodel.answer(root, task, form) if task else readmodel.printed_listing(root, form)
        # nothing it was worked out from has changed: the same answer, and no pipeline
        if kept is not None and printed.again(kept, form):
            return 0
    from specd.commands.common import in_project, project_from, warn

    project = in_project(project_from(ctx))
    before: Any = None  # the marks of what the answer is worked out from, taken before anything is read
    if task and (memo or drawn):
        from specd.executors.temporal import record

        before = readmodel.answer_inputs(project, task, record.watched(project))
    elif memo or drawn:
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
    keeping: Callable[..., None] | None = None  # the answer's keeping, once it is printed (drawn: with the drawing)
    asked = any(temporal.values())  # Temporal named by flag: its copy is shown, wherever the task lives here
    if task and asked and (remote := _on_temporal(project, task, broken, temporal)) is not None:
        data = remote
    elif task and (where := locate(project, task)) != project:  # running in its worktree: its live folder is there
        there, broken_there = pipeline_or_problem(where)
        data = task_status(where, task, there, broken=broken_there) | {"branch": branch(task)}
        if before is not None and not data.get("running"):
            keeping = partial(printed.remember, project, task, before, there, data, notes, temporal, placed=True)
    elif task and not asked and (remote := _on_temporal(project, task, broken, temporal)) is not None:
        data = remote  # run by Temporal workers: what they pushed, and the workflow's state
    else:
        keep: list[Any] = []  # each row's folder and signature, when the status index holds it
        data = (task_status(project, task, config, broken=broken) if task
                else all_status(project, config, broken, full=as_json, keep=keep))  # a table reads what it shows
        if before is not None and isinstance(data, dict) and not data.get("running"):
            keeping = partial(printed.remember, project, data["task"], before, config, data, notes, temporal)
    if keeping is not None and not drawn:
        keeping()
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
            return printed.listing(project, data, as_json, before, config, keep, [*notes, *said])
        if data and drawn:
            return printed.draw_listing(project, data, before, config, keep, [*notes, *said])
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
        seconds = step_seconds(locate(project, data["task"]), data["task"]) if sys.stdout.isatty() else None
        if keeping is not None:
            drawing = printed.draw(lambda: render_task(data, seconds))
            if drawing is not None:
                keeping(drawn=drawing)
        else:
            render_task(data, seconds)
        if data.get("temporal"):
            run = data["temporal"]
            click.echo(f"  on Temporal: workflow {run['workflow_id']} "
                       f"{'running' if run['running'] else 'closed'} ({run['status']}), branch {data['branch']}; "
                       f"{run['ui']}")
    return 0


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
