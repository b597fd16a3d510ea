"""`specd land`."""

from __future__ import annotations

import click

from specd.commands.common import project_from, task_argument
from specd.commands.envelope import emit, json_option


@click.command("land")
@task_argument()
@click.option("--with-deps", is_flag=True, help="Land the tasks TASK needs whose work is not landed yet, first.")
@json_option()
@click.pass_context
def land(ctx: click.Context, /, task: str, with_deps: bool, as_json: bool) -> int:
    """Merge a COMPLETE task's branch specd/TASK into your branch with a merge
    commit, then remove its worktree (the branch is kept). Only TASK lands:
    while a task it needs has work not landed, it is refused (exit 2) unless
    --with-deps lands those first, in order. Landing a landed task merges
    nothing (exit 0). Refuses, changing nothing, when the merge would conflict
    or would overwrite a file of yours that is not committed: changed,
    untracked or git-ignored (exit 2); a change of yours elsewhere stays.
    A task run on Temporal lands from its workers' branch, fetched from the
    remote they push to.

    \b
    Examples:
      specd land api
      specd land ui --with-deps"""
    from specd.executors.land import land as land_task
    from specd.executors.worktrees import branch

    said = land_task(project_from(ctx), task, with_deps)
    if as_json:
        emit(task, landed=branch(task), said=said)
        return 0
    for line in said:
        click.echo(line)
    return 0
