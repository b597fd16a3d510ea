"""`specd approve`, `specd reject`, `specd skip`: answer what a waiting task waits for."""

from __future__ import annotations

import click

from specd.commands.common import project_from, task_argument, task_project
from specd.commands.envelope import emit, json_option
from specd.commands.temporal import answer_on_temporal, temporal_options
from specd.engine.control import answer
from specd.git import identity


def _say(task: str, said: tuple[str, str], answer: str, as_json: bool) -> int:
    text, after = said
    if as_json:
        emit(task, answer=answer, said=text, next=after)
        return 0
    click.echo(f"{task}: {text}")
    click.echo(f"  next: {after}")
    return 0


@click.command()
@task_argument()
@click.option("--note", default="", metavar="TEXT", help="Why; recorded in the checkpoint and given to the step.")
@json_option()
@temporal_options
@click.pass_context
def approve(ctx: click.Context, /, task: str, note: str, as_json: bool, **temporal: str | None) -> int:
    """Approve what TASK waits for: at a gate the step runs at the next
    `specd continue`; at an escalation (an outcome routed to stop, max_visits,
    a budget) the run goes on as the waiting record says. Nothing runs now."""
    return _say(task, _answer(ctx, task, "approve", note, temporal), "approve", as_json)


@click.command()
@task_argument()
@click.option("--note", required=True, metavar="TEXT", help="What to change; it goes into the step's prompt.")
@json_option()
@temporal_options
@click.pass_context
def reject(ctx: click.Context, /, task: str, note: str, as_json: bool, **temporal: str | None) -> int:
    """Send TASK back to the step's `on_reject` target (default: the step
    before the one waiting), which runs again with NOTE in its prompt."""
    return _say(task, _answer(ctx, task, "reject", note, temporal), "reject", as_json)


@click.command()
@task_argument()
@json_option()
@temporal_options
@click.pass_context
def skip(ctx: click.Context, /, task: str, as_json: bool, **temporal: str | None) -> int:
    """Skip the step TASK waits at: it counts as finished with outcome `done`
    and is routed as `done` (so skipping review ends the phase)."""
    return _say(task, _answer(ctx, task, "skip", "", temporal), "skip", as_json)


def _answer(ctx: click.Context, task: str, verb: str, note: str,
            temporal: dict[str, str | None]) -> tuple[str, str]:
    """A task running on Temporal is answered by a signal (its worker records the checkpoint); else here.
    Returns what was done and what to do next."""
    said = answer_on_temporal(project_from(ctx), task, verb, note, temporal)
    if said is not None:
        return said, f"specd status {task} (a worker goes on by itself)"
    project = task_project(ctx, task)
    said = answer(project, task, verb, note if verb != "skip" else "", identity.here("cli", project.root))
    return said, f"specd continue {task}"
