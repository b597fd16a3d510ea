"""`specd run`: every ready task side by side, each in its own worktree."""

from __future__ import annotations

import contextlib
import signal
from typing import Any

import click

from specd.commands.common import complete_tasks, project_from
from specd.commands.continue_ import mode_options
from specd.commands.temporal import run_on_temporal, temporal_options
from specd.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, UsageError, settled_exit


@click.command("run")
@click.argument("tasks", nargs=-1, shell_complete=complete_tasks)
@click.option("--all", "all_tasks", is_flag=True, help="Every unfinished task.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="How many tasks run at once (default: the number of CPUs, at least 2).")
@mode_options("interactive", "the default, unless a run or the pipeline file says otherwise")
@click.option("--agent", "agent_spec", metavar="SPEC", help="The agent every task uses (as in `specd continue`).")
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD", help="A cap on the whole run, across tasks.")
@click.option("--json", "as_json", is_flag=True, help="Every event as one JSON line with its task.")
@click.option("--keep-waiting", is_flag=True,
              help="Be the project's control plane while the run lasts (as `specd ui` is; refused while one "
                   "runs): a task that stops at a gate or escalation stays in the run and goes on once answered "
                   "(`specd approve`, `reject`, `skip`, from any terminal), and so does any other task answered "
                   "meanwhile. The run ends when nothing runs and nothing of its own waits, or on Ctrl-C.")
@click.option("--land", "land_them", is_flag=True, help="Land every task that completed (`specd land`).")
@click.option("--executor", "executor_name", type=click.Choice(["local", "temporal"]), default="local",
              help="local: worktrees on this machine; temporal: one workflow per task, run by `specd worker`s.")
@temporal_options
@click.option("--remote", metavar="NAME|URL", help="With --executor temporal: the shared repository the workers "
              "use (default: origin).")
@click.option("--wait", is_flag=True, help="With --executor temporal: follow the workflows until each one settles.")
@click.option("--move", is_flag=True,
              help="Move the TASKs named to this executor, with their history: with --executor temporal, tasks that "
                   "live on this machine (stopped, their folder committed) go on on Temporal; without it, tasks "
                   "whose workflow ended (`specd cancel TASK` first) come here, each in its worktree. No step they "
                   "finished runs again.")
@click.pass_context
def run(ctx: click.Context, /, tasks: tuple[str, ...], all_tasks: bool, jobs: int | None, mode: str | None,
        agent_spec: str | None, max_cost: float | None, as_json: bool, keep_waiting: bool, land_them: bool,
        executor_name: str, wait: bool, move: bool, **temporal: Any) -> int:
    """Run TASKs (or, with --all, every unfinished task) and what they need,
    side by side, each in its own git worktree .specd/worktrees/<task> on
    branch specd/<task>. Your own tree, index and branch are not touched;
    `specd land TASK` brings a finished task's work back. A task first run
    by `specd continue` lives in your tree: it goes on there (one copy).

    A task another process has (a second `specd run`, a `specd continue`)
    is left to it, its worktree untouched: the run waits for that process,
    then counts the task as it ended there (or runs it, if it was let go
    unfinished).

    Exit codes, the first that applies: 130 interrupted (run again to
    resume), 1 a task failed or is blocked, 2 bad input (an unknown task; a
    task whose files, the pipeline file or the agent's settings are wrong:
    its row names the fix, its status is unchanged), 4 a task was cancelled
    (`specd cancel`), 3 a task waits for a human, 0 all complete.
    """
    from specd.commands.terminal.many import RunView
    from specd.executors.results import Settings

    if bool(tasks) == all_tasks:
        raise UsageError("name the tasks to run, or pass --all", fix="`specd run TASK...` or `specd run --all`")
    if move and all_tasks:
        raise UsageError("--move moves only the tasks named, never --all", fix="`specd run TASK... --move`")
    project = project_from(ctx)
    if executor_name == "temporal":
        return run_on_temporal(project, list(tasks), {**temporal, "mode": mode, "agent_spec": agent_spec,
                                                      "max_cost": max_cost, "jobs": jobs, "move": move}, wait=wait,
                               as_json=as_json)
    if move:
        from specd.commands.temporal import move_here

        move_here(project, list(tasks), temporal, as_json=as_json)
    settings = Settings(mode=mode, agent=agent_spec, max_cost=max_cost, keep_waiting=keep_waiting)
    if jobs is not None:
        settings = Settings(jobs, mode, agent_spec, max_cost, keep_waiting)
    with contextlib.ExitStack() as role:
        if keep_waiting:  # the project's control plane while it runs: refused when one runs already
            from specd.executors.claim import Claim

            role.enter_context(Claim(project, " ".join(["specd run --keep-waiting", *(tasks or ("--all",))])))
        view = RunView(as_json=as_json)
        executor = _executor(project, settings, view)

        def stop(signum: int, frame: Any) -> None:
            executor.interrupt()

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            results = list(executor.run(list(tasks)).values())
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    view.close(results)
    if land_them:
        from specd.executors.land import land

        for result in results:
            if result.status == "COMPLETE" and result.task in executor.started - executor.here:
                for line in land(project, result.task, with_deps=True):
                    click.echo(line)
    if executor.stopping:
        return EXIT_INTERRUPTED
    statuses = {r.status for r in results}
    if statuses & {"BLOCKED", "FAILED"}:
        return EXIT_FAILED
    if any(r.bad_input for r in results):  # the others ran; named above with the fix, each task as it was
        return EXIT_BAD_INPUT
    return settled_exit(statuses)


def _executor(project: Any, settings: Any, view: Any) -> Any:
    """--keep-waiting: the control plane seen from the terminal (it also starts any task answered meanwhile)."""
    if settings.keep_waiting:
        from specd.executors.plane import ControlPlane

        return ControlPlane(project, settings, view, serve=False)
    from specd.executors.local import LocalExecutor

    return LocalExecutor(project, settings, view)
