"""`specd doctor`."""

from __future__ import annotations

import click

from specd.commands.common import emit_json, project_from
from specd.doctor import run_checks
from specd.errors import EXIT_FAILED, EXIT_OK


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> int:
    """Check that this machine and project are ready for a run: git (installed,
    repository, identity), uncommitted changes, a writable disk, the sandbox for
    the agent's commands (bubblewrap or the allowlist), which agent backends are
    available (API keys by presence only, never their value), and the pipeline
    file.

    One line per check: ok, warn (a run works, but see the hint) or FAIL (a run
    would stop). Exit 0 when nothing fails, 1 otherwise.
    """
    checks = run_checks(project_from(ctx))
    failed = any(c.level == "FAIL" for c in checks)
    if as_json:
        emit_json({"ok": not failed, "checks": [c.as_dict() for c in checks]})
    else:
        width = max(len(c.name) for c in checks)
        for check in checks:
            click.echo(f"{check.level:<4}  {check.name:<{width}}  {check.detail}")
            if check.fix and check.level != "ok":
                click.echo(f"{'':<4}  {'':<{width}}  fix: {check.fix}")
        click.echo("specd doctor: " + ("something would stop a run (FAIL above)" if failed else "ready to run"))
    return EXIT_FAILED if failed else EXIT_OK
