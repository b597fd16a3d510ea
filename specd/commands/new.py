"""`specd new`."""

from __future__ import annotations

import click

from specd.commands.common import project_from
from specd.commands.envelope import emit, json_option, note_task
from specd.tasks import graph
from specd.tasks.setup import init_project
from specd.tasks.task import check_name, create_task


@click.command()
@click.argument("task", callback=note_task)
@click.option("--description", "-d", default="", help="What the task should achieve (goes into FEATURE.md).")
@click.option("--after", "after", multiple=True, metavar="TASK",
              help="A task this one needs first (repeatable); written to depends_on in config.json.")
@json_option()
@click.pass_context
def new(ctx: click.Context, task: str, description: str, after: tuple[str, ...], as_json: bool) -> int:
    """Create .specd/tasks/TASK/ with FEATURE.md, CONTEXT.md, DECISIONS.md,
    CHANGELOG.md, STATE.md and config.json.

    TASK is a slug: lowercase letters, digits, '-', '_' and '.'.
    `--after A --after B` makes it wait for tasks A and B (`specd status --graph`).
    """
    project = project_from(ctx)
    check_name(task)
    needs = graph.check_new(project, task, after)  # an unknown name or a cycle: refused before anything is made
    if not project.specd_dir.is_dir():
        init_project(project)
    folder = create_task(project, task, description, needs)
    if as_json:
        emit(task, created=project.rel(folder), depends_on=list(needs), next=f"specd continue {task}")
        return 0
    click.echo(f"created {project.rel(folder)}/")
    click.echo(f"next: edit {project.rel(folder)}/FEATURE.md, then `specd continue {task}`")
    return 0
