"""`specd init`."""

from __future__ import annotations

import click

from specd.commands.common import project_from
from specd.commands.envelope import emit, json_option
from specd.tasks.setup import init_project


@click.command()
@click.option("--pipeline", "fmt", type=click.Choice(["json", "yaml"]),
              help="Also write an editable copy of the built-in pipeline as .specd/pipeline.<fmt>.")
@json_option()
@click.pass_context
def init(ctx: click.Context, fmt: str | None, as_json: bool) -> int:
    """Create .specd/ with hooks/, workflows/ and tasks/ in the project.

    Safe to run again: it never overwrites a file you already have. With
    --pipeline, the copy replaces the built-in default whole, so edit it to
    reorder, disable or add steps.
    """
    project = project_from(ctx)
    lines = init_project(project, fmt)
    if as_json:
        emit(None, project=str(project.root), said=list(lines))
        return 0
    for line in lines:
        click.echo(line)
    return 0
