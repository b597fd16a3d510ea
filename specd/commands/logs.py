"""`specd logs`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from specd.commands.common import complete_steps, task_argument, task_project
from specd.commands.envelope import emit
from specd.redact import redact
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.system.visible import visible
from specd.tasks import logs as log
from specd.tasks.project import Project
from specd.tasks.secrets import load_project_secrets
from specd.tasks.task import existing_task


@click.command()
@task_argument()
@click.option("--step", metavar="STEP", shell_complete=complete_steps, help="Only this step's events and transcripts.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the events as JSON lines, as recorded, then one envelope line (schemas/).")
@click.option("--follow", "-f", is_flag=True,
              help="Keep printing new events and the agents' own output while a run goes on; stop when it ends.")
@click.pass_context
def logs(ctx: click.Context, task: str, step: str | None, as_json: bool, follow: bool) -> int:
    """Show TASK's events (runs, steps, hooks, gates, notices) one line each,
    then the agent transcript of every step (with --step, only that step's).
    With -f, follow a running task until its run ends: its events, each
    agent's and hook's output as it is printed, and where each transcript is
    once its step ends."""
    project = task_project(ctx, task)
    _on_temporal(project, task)
    load_project_secrets(project.root)  # transcripts written before a .env value existed are masked now too
    task_dir = existing_task(project, task)
    store = StateStore(task_dir, task)
    if step is not None:
        log.check_step(project, step, [str(row.get("step")) for row in (store.journal.read())])
    if follow:
        return _follow(task, task_dir, store, step, as_json, project.root)
    shown, skipped = 0, list[int]()
    for event in store.journal.read(skipped):
        if log.matches(event, step):
            shown += 1
            click.echo(redact(json.dumps(event, default=str) if as_json else visible(log.line(event))))
    if skipped:
        from specd.commands.common import warn

        warn([log.unread(task_dir / "events.jsonl", skipped)])
    if as_json:
        emit(task, indent=None, step=step, events=shown)
        return 0
    for row, path in log.transcripts(task_dir, store.load(), step):
        phase = f" phase {row['phase']}" if row.get("phase") else ""
        click.echo(f"\n--- {row['step']}{phase} ({row.get('kind')}, {row.get('outcome')}): {path} ---")
        try:
            _echo_file(path)
        except OSError as exc:
            click.echo(f"(transcript unreadable: {exc.strerror})")
    return 0


def _on_temporal(project: Project, task: str) -> None:
    """Said on stderr for a task run by Temporal workers: its events and transcripts stay in their clones (git
    ignores them, so they are never pushed), and this clone's copy has none of them."""
    from specd.executors.temporal import record

    if record.on_temporal(project, task):
        from specd.commands.common import warn

        warn([f"task {task!r} runs on Temporal: its events and transcripts stay in the workers' clones (under "
              f"their --workdir), so none are shown here; `specd status {task}` shows its steps as they pushed them"])


def _follow(task: str, task_dir: Path, store: StateStore, step: str | None, as_json: bool, root: Path) -> int:
    from specd.tasks.follow import Ended, Follower, Output, belongs, follow
    from specd.tasks.secrets import refresh_project_secrets

    state = store.load(with_history=False)
    lock = TaskLock(task_dir, task)
    shown = 0
    for item in follow(Follower(task_dir, store.journal.path, state.run_id if state else None, lock.is_held()), lock):
        if isinstance(item, Output | Ended):
            if not belongs(item.label, step):
                continue
            record, text = item.record(), item.line()
        elif log.matches(item, step):
            record, text = item, log.line(item)
        else:
            continue
        shown += 1
        refresh_project_secrets(root)  # a .env the step made meanwhile: its values masked from now on (once a second)
        click.echo(redact(json.dumps(record, default=str) if as_json else visible(text, colours=True)))
    if as_json:
        emit(task, indent=None, step=step, events=shown)
    return 0


def _echo_file(path: Path) -> None:
    """A transcript a megabyte at a time (it may be huge), without its trailing blank space."""
    held, wrote = "", False
    with path.open(encoding="utf-8", errors="replace") as handle:
        while chunk := handle.read(1 << 20):
            body = chunk.rstrip()
            if body:
                click.echo(redact(visible(held + body, colours=True)), nl=False)  # a program's colours, nothing more
                held, wrote = chunk[len(body):], True
            else:
                held += chunk  # blank space: printed only if more text follows
    click.echo("" if wrote else "(empty)")
