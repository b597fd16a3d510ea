"""`specd land`."""

from __future__ import annotations

import click

from specd.commands.common import complete_tasks, project_from


@click.command("land")
@click.argument("task", shell_complete=complete_tasks)
@click.pass_context
def land(ctx: click.Context, /, task: str) -> int:
    """Merge a COMPLETE task's branch specd/TASK into your branch with a merge
    commit, then remove its worktree (the branch is kept). Refuses, changing
    nothing, when your tree has changes in the paths the merge touches or the
    merge would conflict (exit 2)."""
    from specd.executors.land import land as land_task

    for line in land_task(project_from(ctx), task):
        click.echo(line)
    return 0
