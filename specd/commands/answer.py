"""`specd approve`, `specd reject`, `specd skip`: answer what a waiting task waits for."""

from __future__ import annotations

import click

from specd.commands.common import task_argument, task_project
from specd.commands.envelope import emit, json_option
from specd.engine.control import answer


def _say(task: str, said: str, answer: str, as_json: bool) -> int:
    if as_json:
        emit(task, answer=answer, said=said, next=f"specd continue {task}")
        return 0
    click.echo(f"{task}: {said}")
    click.echo(f"  next: specd continue {task}")
    return 0


@click.command()
@task_argument()
@click.option("--note", default="", metavar="TEXT", help="Why; recorded in the checkpoint and given to the step.")
@json_option()
@click.pass_context
def approve(ctx: click.Context, task: str, note: str, as_json: bool) -> int:
    """Approve what TASK waits for: at a gate the step runs at the next
    `specd continue`; at an escalation (an outcome routed to stop, max_visits,
    a budget) the run goes on as the waiting record says. Nothing runs now."""
    return _say(task, answer(task_project(ctx, task), task, "approve", note), "approve", as_json)


@click.command()
@task_argument()
@click.option("--note", required=True, metavar="TEXT", help="What to change; it goes into the step's prompt.")
@json_option()
@click.pass_context
def reject(ctx: click.Context, task: str, note: str, as_json: bool) -> int:
    """Send TASK back to the step's `on_reject` target (default: the step
    before the one waiting), which runs again with NOTE in its prompt."""
    return _say(task, answer(task_project(ctx, task), task, "reject", note), "reject", as_json)


@click.command()
@task_argument()
@json_option()
@click.pass_context
def skip(ctx: click.Context, task: str, as_json: bool) -> int:
    """Skip the step TASK waits at: it counts as finished with outcome `done`
    and is routed as `done` (so skipping review ends the phase)."""
    return _say(task, answer(task_project(ctx, task), task, "skip"), "skip", as_json)
