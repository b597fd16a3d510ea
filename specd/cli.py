"""The `specd` command: a click group whose subcommands load lazily.

Start-up speed matters (it runs in every shell prompt of a busy user), so
command modules, rich and anthropic are imported only when a command runs.
The one error boundary lives in ``main``: expected errors become a message
and an exit code, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from specd import __version__

# name -> (module, attribute, one-line help shown by `specd --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("specd.commands.init", "init", "Create .specd/ (and optionally an editable pipeline file)."),
    "new": ("specd.commands.new", "new", "Create a task folder with its starter documents."),
    "continue": ("specd.commands.continue_", "continue_", "Run a task's pipeline from where it stands."),
    "run": ("specd.commands.run", "run", "Run every ready task side by side, each in its own worktree."),
    "worker": ("specd.commands.worker", "worker", "Run tasks submitted to Temporal on this machine."),
    "land": ("specd.commands.land", "land", "Merge a finished task's branch into your branch."),
    "status": ("specd.commands.status", "status", "Show where every task (or one task) stands."),
    "approve": ("specd.commands.answer", "approve", "Approve what a waiting task waits for (gate, escalation)."),
    "reject": ("specd.commands.answer", "reject", "Send a waiting task back to an earlier step, with a note."),
    "skip": ("specd.commands.answer", "skip", "Skip the step a task waits at (it counts as done)."),
    "cancel": ("specd.commands.control", "cancel", "Stop a task for good (a running one gracefully)."),
    "retry": ("specd.commands.control", "retry", "Run the step that failed again, then go on."),
    "rerun": ("specd.commands.control", "rerun", "Run a task again from a step; earlier history is kept."),
    "logs": ("specd.commands.logs", "logs", "Show a task's events and step transcripts; -f follows a run."),
    "pipeline": ("specd.commands.pipeline", "pipeline", "Validate or show the effective pipeline."),
    "hooks": ("specd.commands.hooks", "hooks", "List the hooks that run around each step, and why."),
    "demo": ("specd.commands.demo", "demo", "Run the whole pipeline on a sample project (no API key)."),
    "ui": ("specd.commands.ui", "ui", "Serve the dashboard and run what is answered (the control plane)."),
    "serve": ("specd.commands.ui", "serve", "The control plane without a browser: runs what is answered anywhere."),
    "mcp": ("specd.commands.mcp", "mcp", "Serve specd to MCP clients (Claude Code) over stdio: tasks, answers, logs."),
    "doctor": ("specd.commands.doctor", "doctor", "Check git, the sandbox, agent backends and the pipeline file."),
    "test": ("specd.commands.test", "test", "Run the pipeline's test cases with a scripted agent (no tokens)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        try:
            command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            return None  # a command that a later release adds; hide it until it exists
        assert isinstance(command, click.Command)
        if command.epilog is None:
            from specd.commands.examples import epilog

            command.epilog = epilog(cmd_name)
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                              list[str]]:
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            from specd.errors import closest

            close = closest(name, list(COMMANDS))
            ctx.fail(f"no such command {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                     + " (see `specd --help`)")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from the table above so `--help` never imports a command module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, _, text) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="specd")
@click.option("--project", "project_dir", type=click.Path(file_okay=False),  # a str: pathlib waits for a command
              help="Project root (default: the nearest folder above the current one holding .specd/, "
                   "else the current folder).")
@click.pass_context
def cli(ctx: click.Context, project_dir: str | None) -> None:
    """specd runs spec-driven development pipelines: a task moves through markdown
    workflow steps (discuss, research, plan, then plan/execute/review/revise per
    phase), each handed to an agent, with every step recorded so a run can always
    be resumed.

    \b
    Start here:
      specd demo                      watch a whole run on a sample project
      specd init && specd new my-task --description "..."
      specd continue my-task --semi-auto

    Exit codes: 0 done, 1 a step or hook failed, 2 bad input, 3 waiting for a
    human, 4 cancelled, 130 interrupted (resumable).
    """
    ctx.obj = {"project_dir": project_dir}


def main(argv: list[str] | None = None) -> Any:
    try:
        _main(argv)
    except SystemExit as done:
        if argv is None and "temporalio" in sys.modules:
            # temporalio's Rust threads can crash the interpreter's teardown (sdk-python#300): leave at once
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(done.code if isinstance(done.code, int) else 0 if done.code is None else 1)
        raise


def _main(argv: list[str] | None) -> Any:
    from specd.errors import EXIT_INTERRUPTED, SpecdError, machine_error
    from specd.system import ownpath

    ownpath.guard()  # PATH's relative entries would find specd's git in the project, which the agent writes

    envelope = sys.modules.get("specd.commands.envelope")
    if envelope is not None:  # an earlier in-process call's task must not name this call's error
        envelope.SEEN["task"] = None
    try:
        code = cli.main(args=argv, prog_name="specd", standalone_mode=False)
    except SpecdError as exc:
        from specd.redact import redact

        click.echo(redact(f"specd: {exc.label}: {exc}"), err=True)
        _json_error(argv, exc.exit_code, exc.message, exc.fix)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("specd: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        _json_error(argv, exc.exit_code, exc.format_message(), "see `specd --help`")
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("specd: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except OSError as exc:  # the machine refused (disk full, read-only, permissions): a message, not a trace
        error = machine_error(exc)
        if error is None:
            raise
        click.echo(f"specd: error: {error}", err=True)
        _json_error(argv, error.exit_code, error.message, error.fix)
        sys.exit(error.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _json_error(argv: list[str] | None, code: int, message: str, fix: str | None) -> None:
    """With --json, a failure is also an envelope on stdout, so a script reads one shape either way."""
    from specd.commands.envelope import print_error, wants_json

    if wants_json(argv):
        print_error(code, message, fix)
