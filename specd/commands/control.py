"""`specd cancel`, `specd retry`, `specd rerun`: run control outside the loop."""

from __future__ import annotations

from typing import Any

import click

from specd.commands.common import complete_steps, project_from, task_argument, task_project
from specd.commands.continue_ import run_options, runnable, start_run
from specd.commands.envelope import emit, json_option
from specd.commands.temporal import answer_on_temporal, temporal_options
from specd.engine import control
from specd.git import identity


@click.command()
@task_argument()
@json_option()
@temporal_options
@click.pass_context
def cancel(ctx: click.Context, /, task: str, as_json: bool, **temporal: str | None) -> int:
    """Cancel TASK: a running task is stopped gracefully (SIGTERM to the specd
    process holding its lock, which stops its agent and saves), then marked
    CANCELLED, and in a git repository that record is committed (the task's
    folder alone). CANCELLED is final; `specd rerun TASK --from STEP` starts
    again."""
    said = answer_on_temporal(project_from(ctx), task, "cancel", "", temporal)
    if said is None:
        project = task_project(ctx, task)
        said = control.cancel(project, task, identity.here("cli", project.root))
    if as_json:
        emit(task, status="CANCELLED", said=said)
        return 0
    click.echo(f"{task}: {said}")
    return 0


@click.command()
@task_argument()
@run_options
@click.pass_context
def retry(ctx: click.Context, /, task: str, **options: Any) -> int:
    """Run the step that FAILED (or BLOCKED) TASK again, then go on as
    `specd continue` would, with the run's saved agent and mode."""
    project = runnable(ctx, task)
    click.echo(f"{task}: {control.retry(project, task, identity.here('cli', project.root))}", err=True)
    return start_run(ctx, task, **options)


@click.command()
@task_argument()
@click.option("--from", "step", required=True, metavar="STEP", shell_complete=complete_steps,
              help="The step to start again from.")
@click.option("--phase", metavar="P", help="The phase, for a step inside a `foreach: phases` pipeline.")
@run_options
@click.pass_context
def rerun(ctx: click.Context, /, task: str, step: str, phase: str | None, **options: Any) -> int:
    """Run TASK again from STEP (in phase P). Later history rows are kept and
    marked superseded, never deleted. Works on COMPLETE, FAILED and CANCELLED
    tasks too, e.g. after new phases were added to the roadmap."""
    project = runnable(ctx, task)
    click.echo(f"{task}: {control.rerun(project, task, step, phase, identity.here('cli', project.root))}", err=True)
    return start_run(ctx, task, **options)
