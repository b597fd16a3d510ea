"""`specd doctor`."""

from __future__ import annotations

import click

from specd.commands.common import project_from
from specd.commands.envelope import emit, error_body
from specd.doctor import run_checks
from specd.errors import EXIT_FAILED, EXIT_OK


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> int:
    """Check that this machine and project are ready for a run: git (installed,
    repository, identity), uncommitted changes, a writable disk, the sandbox for
    the agent's commands (bubblewrap or the allowlist), the pipeline file, and
    every agent backend: its CLI and version, its SDK, which keys are set (by
    presence only, never their value).

    One line per check: ok, warn (a run works, but see the hint) or FAIL (a run
    would stop). A backend fails only when the project uses it (the pipeline's
    agent, a step's own agent block, a task's remembered agent). Exit 0 when
    nothing fails, 1 otherwise. --json output follows schemas/doctor.schema.json.
    """
    checks = run_checks(project_from(ctx))
    failed = any(c.level == "FAIL" for c in checks)
    if as_json:
        bad = [c.name for c in checks if c.level == "FAIL"]
        error = error_body(EXIT_FAILED, "failed checks: " + ", ".join(bad), "see each check's fix") if bad else None
        emit(None, error=error, checks=[c.as_dict() for c in checks],
             backends=[c.backend for c in checks if c.backend is not None])
    else:
        width = max(len(c.name) for c in checks)
        for check in checks:
            click.echo(f"{check.level:<4}  {check.name:<{width}}  {check.detail}")
            if check.fix and check.level != "ok":
                click.echo(f"{'':<4}  {'':<{width}}  fix: {check.fix}")
        click.echo("specd doctor: " + ("something would stop a run (FAIL above)" if failed else "ready to run"))
    return EXIT_FAILED if failed else EXIT_OK
