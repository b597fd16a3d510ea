"""`specd approve`, `specd reject`, `specd skip`: answer what a waiting task waits for.

In the project's clone the answer is written to the task's state, and the project's control plane (`specd ui`,
when one runs) starts the task; from another clone, ``--server URL`` sends it to that control plane.
"""

from __future__ import annotations

from pathlib import Path

import click

from specd.commands.common import project_from, task_argument, task_project
from specd.commands.envelope import emit, json_option
from specd.commands.temporal import answer_on_temporal, temporal_options
from specd.engine.control import answer
from specd.executors import claim
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
@click.option("--server", metavar="URL", envvar="SPECD_SERVER",
              help="Send the answer to the control plane at URL (the address `specd ui` printed, with its token; "
                   "env SPECD_SERVER): from another clone, recorded as from a clone by your git identity.")
@temporal_options
@click.pass_context
def approve(ctx: click.Context, /, task: str, note: str, as_json: bool, server: str | None,
            **temporal: str | None) -> int:
    """Approve what TASK waits for: at a gate the step runs at the next
    `specd continue`; at an escalation (an outcome routed to stop, max_visits,
    a budget) the run goes on as the waiting record says. The project's
    control plane (`specd ui`), when one runs, goes on at once; otherwise
    `specd continue TASK` does."""
    return _say(task, _answer(ctx, task, "approve", note, server, temporal), "approve", as_json)


@click.command()
@task_argument()
@click.option("--note", required=True, metavar="TEXT", help="What to change; it goes into the step's prompt.")
@json_option()
@click.option("--server", metavar="URL", envvar="SPECD_SERVER",
              help="Send the answer to the control plane at URL (the address `specd ui` printed, with its token; "
                   "env SPECD_SERVER): from another clone, recorded as from a clone by your git identity.")
@temporal_options
@click.pass_context
def reject(ctx: click.Context, /, task: str, note: str, as_json: bool, server: str | None,
           **temporal: str | None) -> int:
    """Send TASK back to the step's `on_reject` target (default: the step
    before the one waiting), which runs again with NOTE in its prompt."""
    return _say(task, _answer(ctx, task, "reject", note, server, temporal), "reject", as_json)


@click.command()
@task_argument()
@json_option()
@click.option("--server", metavar="URL", envvar="SPECD_SERVER",
              help="Send the answer to the control plane at URL (the address `specd ui` printed, with its token; "
                   "env SPECD_SERVER): from another clone, recorded as from a clone by your git identity.")
@temporal_options
@click.pass_context
def skip(ctx: click.Context, /, task: str, as_json: bool, server: str | None, **temporal: str | None) -> int:
    """Skip the step TASK waits at: it counts as finished with outcome `done`
    and is routed as `done` (so skipping review ends the phase)."""
    return _say(task, _answer(ctx, task, "skip", "", server, temporal), "skip", as_json)


def _answer(ctx: click.Context, task: str, verb: str, note: str, server: str | None,
            temporal: dict[str, str | None]) -> tuple[str, str]:
    """Sent to a control plane (``--server``); a task running on Temporal is answered by a signal (its worker
    records the checkpoint); else here. Returns what was done and what to do next."""
    if server:
        from specd.commands import remote

        return remote.answer(server, task, verb, note if verb != "skip" else "", Path.cwd())
    said = answer_on_temporal(project_from(ctx), task, verb, note, temporal)
    if said is not None:
        return said, f"specd status {task} (a worker goes on by itself)"
    project = task_project(ctx, task)
    said = answer(project, task, verb, note if verb != "skip" else "", identity.here("cli", project.root))
    plane = claim.running(project)
    if plane is not None:
        return said, f"the control plane {plane.text()} runs it now; follow it with `specd status {task}`"
    return said, f"specd continue {task}"
