"""`specd new`."""

from __future__ import annotations

import click

from specd.commands.common import project_from
from specd.commands.envelope import emit, json_option, note_task
from specd.tasks.setup import init_project
from specd.tasks.task import create_task


@click.command()
@click.argument("task", callback=note_task)
@click.option("--description", "-d", default="", help="What the task should achieve (goes into FEATURE.md).")
@json_option()
@click.pass_context
def new(ctx: click.Context, task: str, description: str, as_json: bool) -> int:
    """Create .specd/tasks/TASK/ with FEATURE.md, CONTEXT.md, DECISIONS.md,
    CHANGELOG.md, STATE.md and config.json.

    TASK is a slug: lowercase letters, digits, '-', '_' and '.'.
    """
    project = project_from(ctx)
    if not project.specd_dir.is_dir():
        init_project(project)
    folder = create_task(project, task, description)
    if as_json:
        emit(task, created=project.rel(folder), next=f"specd continue {task}")
        return 0
    click.echo(f"created {project.rel(folder)}/")
    click.echo(f"next: edit {project.rel(folder)}/FEATURE.md, then `specd continue {task}`")
    return 0
