"""Small helpers every command shares."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from specd.tasks.project import Project, find_project

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


def project_from(ctx: click.Context) -> Project:
    from specd.system import ownpath

    given = (ctx.find_root().obj or {}).get("project_dir")  # a str: specd.cli leaves pathlib to the commands
    project = find_project(explicit=None if given is None else Path(given))
    ownpath.guard(project.root)  # no program of specd's own is found in a folder the agent can write
    return project


def in_project(project: Project) -> Project:
    """``project`` if it has a .specd/ folder: outside any project, "no tasks" would hide a wrong folder."""
    if not project.specd_dir.is_dir():
        from specd.errors import UsageError

        raise UsageError(f"no .specd/ folder in {project.root} or any folder above it: not a specd project",
                         fix="run `specd init` here (or pass --project DIR, or cd into your project)")
    return project


def task_project(ctx: click.Context, task: str) -> Project:
    """The project ``task`` lives in: its own worktree while `specd run` runs it there, else this one."""
    from specd.tasks.locate import locate

    return locate(project_from(ctx), task)


def warn(messages: tuple[str, ...] | list[str]) -> None:
    for message in messages:
        click.echo(warning(message), err=True)


def warning(message: str) -> str:
    """The line ``warn`` prints for ``message`` (redacted)."""
    from specd.redact import redact

    return redact(f"specd: warning: {message}")


def emit_json(data: Any) -> None:
    from specd.redact import redact_obj

    click.echo(json.dumps(redact_obj(data), indent=2, default=str))


def complete_tasks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Task names for shell completion; silent on any trouble, since a shell prompt is no place for errors."""
    from click.shell_completion import CompletionItem

    from specd.tasks.task import list_tasks

    try:
        project = project_from(ctx)
        names = [name for name in list_tasks(project) if name.startswith(incomplete)]
        if ctx.command.name in ANSWERS:  # only a task that waits for an answer can take one
            names = [name for name in names if _waits(project, name)]
        return [CompletionItem(name) for name in names]
    except Exception:  # noqa: BLE001 - completion must never break the user's shell
        return []


ANSWERS = ("approve", "reject", "skip")


def _waits(project: Project, task: str) -> bool:
    from specd.engine.waiting import held
    from specd.state.store import StateStore
    from specd.tasks.locate import locate
    from specd.tasks.task import existing_task

    where = locate(project, task)  # a task running in its worktree is answered there
    state = StateStore(existing_task(where, task), task).load(with_history=False)
    return state is not None and held(state)


def complete_steps(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Step names of the effective pipeline, for --from and --step."""
    from click.shell_completion import CompletionItem

    from specd.pipeline import load_pipeline

    try:
        config = load_pipeline(project_from(ctx))
    except Exception:  # noqa: BLE001 - completion must never break the user's shell
        return []
    names = dict.fromkeys(s.name for steps in config.pipelines.values() for s in steps)
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def task_argument() -> Callable[[click.decorators.FC], click.decorators.FC]:
    from specd.commands.envelope import note_task

    return click.argument("task", shell_complete=complete_tasks, callback=note_task)
