"""`specd hooks`."""

from __future__ import annotations

import click

from specd.commands.common import project_from, warn
from specd.commands.envelope import emit
from specd.pipeline import load_pipeline
from specd.pipeline.describe import hook_rows
from specd.pipeline.resolve import pipeline_warnings
from specd.pipeline.workflows import check_workflow_files


@click.command()
@click.option("--step", "step_name", metavar="NAME", help="Only this step's hooks.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def hooks(ctx: click.Context, step_name: str | None, as_json: bool) -> int:
    """List the hooks around each step, with where each one comes from:

    \b
      explicit    written on the step in the pipeline file
      convention  found as .specd/hooks/pre-<step>.md or post-<step>.md
      global      the pipeline file's pre-step / post-step hooks

    Order at run time: global pre-step, step pre, STEP, step post, global
    post-step. Disabled steps run no hooks.
    """
    project = project_from(ctx)
    config = load_pipeline(project)
    rows = hook_rows(config, project, step_name)
    if as_json:
        check_workflow_files(config, project)  # a hook file that does not load: the error is the one document
        emit(None, step=step_name, hooks=rows)
        return 0
    warn(pipeline_warnings(config, project))
    from specd.commands.terminal.pipeline import render_hooks

    render_hooks(rows)
    check_workflow_files(config, project)  # listed, then said: a hook file that does not load stops its step's run
    return 0
