"""`specd continue`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import click

from specd.commands.common import project_from
from specd.errors import UsageError
from specd.events import Event, EventBus
from specd.human import Human
from specd.project import Project
from specd.runner import run_task


def mode_options(default: str, note: str) -> Callable[[click.decorators.FC], click.decorators.FC]:
    helps = {"auto": "No gates; stops on failure, on a 'stop' outcome, or when done.",
             "semi-auto": "Gate only before steps with pause_in_semi_auto.",
             "interactive": "Gate before every step."}

    def decorate(func: click.decorators.FC) -> click.decorators.FC:
        for mode in ("auto", "semi-auto", "interactive"):
            text = helps[mode] + (f" ({note})" if mode == default else "")
            func = click.option(f"--{mode}", "mode", flag_value=mode, help=text)(func)
        return func

    return decorate


@click.command("continue")
@click.argument("task", required=False)
@mode_options("interactive", "the default, unless the pipeline file sets mode")
@click.option("--agent", "agent_spec", metavar="SPEC",
              help="anthropic | claude_code[:model] | 'cmd:<shell command>' | 'scripted:<script.yaml>' "
                   "(default: the pipeline's agent).")
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD", help="Stop before the run costs more.")
@click.option("--quiet", "-q", is_flag=True, help="Only warnings, failures and the final summary.")
@click.option("--verbose", "-v", is_flag=True,
              help="Also show each tool call and a line of the agent's text as they happen (agents that stream "
                   "them: anthropic, claude_code).")
@click.option("--json", "as_json", is_flag=True, help="Print every event as one JSON line on stdout (for scripts).")
@click.pass_context
def continue_(ctx: click.Context, task: str | None, mode: str | None, agent_spec: str | None,
              max_cost: float | None, quiet: bool, verbose: bool, as_json: bool) -> int:
    """Run TASK's pipeline from where it stands, until it completes, fails, or
    needs a human.

    Gates (interactive, semi-auto) read answers from the terminal, or one line
    at a time from stdin when it is not a terminal: proceed, skip, back,
    jump <step>, stop. End of input at a gate stops the run (exit 3).

    Exit codes: 0 complete, 1 a step or hook failed (BLOCKED), 2 bad input,
    3 waiting for a human, 130 interrupted (resume with `specd continue`).
    """
    if quiet and verbose:
        raise UsageError("--quiet and --verbose contradict each other", fix="pass one of them")
    project = project_from(ctx)
    task = task or _pick_task(project)
    from specd.ui.human import StreamHuman
    from specd.ui.live import LiveView

    def human_for(mode: str) -> Human:
        return StreamHuman()

    # --json keeps stderr quiet; its event lines on stdout already carry the agent's tool calls and text.
    bus = EventBus(LiveView(quiet=quiet or as_json, verbose=verbose))
    if as_json:
        bus.subscribe(json_lines)
    return run_task(project, task, mode_flag=mode, agent_spec=agent_spec, human_for=human_for, events=bus,
                    max_cost=max_cost)


def json_lines(event: Event) -> None:
    from specd.redact import redact_obj

    click.echo(json.dumps(redact_obj({"kind": event.kind, **event.data}), default=str))


def _pick_task(project: Project) -> str:
    from specd.status import all_status

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
