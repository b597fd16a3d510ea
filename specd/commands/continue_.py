"""`specd continue`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from specd.commands.common import complete_tasks, project_from, task_project, warn
from specd.commands.envelope import note_task
from specd.errors import UsageError
from specd.events import Event, EventBus
from specd.human import Human
from specd.tasks.project import Project


def mode_options(default: str, note: str) -> Callable[[click.decorators.FC], click.decorators.FC]:
    helps = {"auto": "No gates; stops on failure, on a 'stop' outcome, or when done.",
             "semi-auto": "Gate only before steps with pause_in_semi_auto.",
             "interactive": "Gate before every step."}

    def decorate(func: click.decorators.FC) -> click.decorators.FC:
        for mode in ("auto", "semi-auto", "interactive"):
            text = helps[mode] + (f" ({note})" if mode == default else "")
            # multiple=True collects every mode flag given, so two different ones are refused, not last-wins
            func = click.option(f"--{mode}", "mode", flag_value=mode, multiple=True, callback=_one_mode,
                                help=text)(func)
        return func

    return decorate


def _one_mode(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    given = list(dict.fromkeys(value))
    if len(given) > 1:
        raise click.UsageError(f"--{given[0]} and --{given[1]} contradict each other; pass one mode", ctx=ctx)
    return given[0] if given else None


def run_options(func: click.decorators.FC) -> click.decorators.FC:
    """The options every command that runs the loop takes (continue, retry, rerun)."""
    for option in reversed([
        mode_options("interactive", "the default, unless the run or the pipeline file says otherwise"),
        click.option("--agent", "agent_spec", metavar="SPEC",
                     help="anthropic | claude_code[:model] | codex[:model] | gemini[:model] | openai:<model> | "
                          "'cmd:<shell command>' | "
                          "'scripted:<script.yaml>' (default: the one this run started with, else the "
                          "pipeline's agent)."),
        click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD",
                     help="Stop before the run costs more (remembered by the run)."),
        click.option("--quiet", "-q", is_flag=True, help="Only warnings, failures and the final summary."),
        click.option("--verbose", "-v", is_flag=True,
                     help="Also show each tool call and a line of the agent's text as they happen (agents that "
                          "stream them: anthropic, claude_code, codex, gemini, openai)."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print every event as one JSON line on stdout (for scripts)."),
    ]):
        func = option(func)
    return func


@click.command("continue")
@click.argument("task", required=False, shell_complete=complete_tasks, callback=note_task)
@run_options
@click.option("--approve", "approve", is_flag=True,
              help="Approve what the task waits for (as `specd approve` does), then go on.")
@click.option("--note", default="", metavar="TEXT", help="With --approve: a note for the checkpoint and the step.")
@click.pass_context
def continue_(ctx: click.Context, /, task: str | None, approve: bool, note: str, **options: Any) -> int:
    """Run TASK's pipeline from where it stands, until it completes, fails, or
    needs a human.

    A bare `specd continue TASK` reuses the agent, mode and --max-cost the run
    started with; a flag overrides them (and says so).

    A task WAITING at a gate or an escalation stays waiting until answered:
    `specd approve`, `specd reject --note`, `specd skip`, or `--approve` here.
    Interactive and semi-auto runs may also answer a waiting gate from the
    terminal, or one line at a time from stdin when it is not a terminal:
    proceed, skip, back, jump <step>, stop. End of input at a gate stops the
    run (exit 3).

    Exit codes: 0 complete, 1 a step or hook failed (BLOCKED), 2 bad input
    (also: a FAILED or CANCELLED task), 3 waiting for a human, 130
    interrupted (resume with `specd continue TASK`).
    """
    project = project_from(ctx)
    task = task or _pick_task(project)
    if note and not approve:
        raise UsageError("--note goes with --approve here", fix=f"add --approve, or `specd reject {task} --note ...`")
    return start_run(ctx, task, approve=note if approve else None, **options)


def start_run(ctx: click.Context, task: str, *, mode: str | None, agent_spec: str | None, max_cost: float | None,
              quiet: bool, as_json: bool, verbose: bool = False, approve: str | None = None) -> int:
    if quiet and verbose:
        raise UsageError("--quiet and --verbose contradict each other", fix="pass one of them")
    from specd.commands.terminal.human import StreamHuman
    from specd.commands.terminal.live import LiveView
    from specd.engine.seam import run_task  # here: `specd run` takes this module's options, not always its engine

    def human_for(mode: str) -> Human:
        return StreamHuman()

    # --json keeps stderr quiet; its event lines on stdout already carry the agent's tool calls and text.
    bus = EventBus(LiveView(quiet=quiet or as_json, verbose=verbose))
    if as_json:
        bus.subscribe(json_lines)
    stopped = run_task(_home(ctx, task), task, mode_flag=mode, agent_spec=agent_spec, human_for=human_for,
                       events=bus, max_cost=max_cost, approve=approve)
    if as_json:  # the stream ends with the one envelope every verb prints
        from specd.commands.envelope import emit, error_body

        code = stopped.exit_code
        failed = error_body(code, stopped.reason or stopped.status, _next(task, stopped.status)) if code else None
        emit(task, indent=None, error=failed, status=stopped.status, waiting=stopped.waiting)
    return stopped.exit_code


def _home(ctx: click.Context, task: str) -> Project:
    """The tree the task lives in, recorded as its home on its first run (the main tree, run from here).
    A task that lives in a worktree (`specd run` made it) runs there: one copy, wherever it is asked from."""
    from specd.tasks import home
    from specd.tasks.task import existing_task

    given = project_from(ctx)
    where = task_project(ctx, task)
    folder = existing_task(where, task)  # a mistyped name is said as such, and gets no record
    main = home.main_of(given)
    if main == given:
        from specd.executors.temporal import elsewhere

        said = elsewhere.refuse_first_run(main, task)  # another clone's workflow may have it: never a second copy
        if said:
            warn([said])
        home.local(main, task, home.settle(main, task, home.Home("main")))
    if where != given:
        click.echo(f"specd: {task} lives in its worktree {given.rel(where.root)} (branch specd/{task}), "
                   "made by `specd run`: running it there", err=True)
        edited = home.edited_copy(given, task, where.root)
        if edited:
            warn([f"{', '.join(edited)} changed in this tree, but {task} reads its files in its worktree: make "
                  f"{'the change' if len(edited) == 1 else 'the changes'} in {given.rel(folder)}/ instead"])
    return where


def runnable(ctx: click.Context, task: str) -> Project:
    """The tree TASK lives in, for a verb that changes its run before running it (`retry`, `rerun`): a task that
    lives on Temporal is refused before anything here is touched (a run state written here would be a second copy)."""
    from specd.tasks import home

    given = project_from(ctx)
    main = home.main_of(given)
    if main == given:
        home.local(main, task, home.current(main, task))
    return task_project(ctx, task)


def _next(task: str, status: str) -> str:
    return {"WAITING_FOR_HUMAN": f"specd status {task}, then specd approve|reject|skip {task}",
            "CANCELLED": f"specd rerun {task} --from STEP"}.get(status, f"specd status {task}")


def json_lines(event: Event) -> None:
    from specd.redact import redact_obj

    click.echo(json.dumps(redact_obj({"kind": event.kind, **event.data}), default=str))


def _pick_task(project: Project) -> str:
    from specd.tasks.status import all_status

    open_tasks: list[str] = [str(row["task"]) for row in all_status(project) if row["status"] != "COMPLETE"]
    if not open_tasks:
        raise UsageError(f"no unfinished tasks in {project.tasks_dir}",
                         fix='create one with `specd new <task> --description "..."`')
    if sys.stdin.isatty():
        if len(open_tasks) == 1:
            return str(open_tasks[0])
        return str(click.prompt("task", type=click.Choice(open_tasks), default=open_tasks[0]))
    raise UsageError("which task? unfinished tasks: " + ", ".join(open_tasks),
                     fix=f"name one: `specd continue {open_tasks[0]}`")
