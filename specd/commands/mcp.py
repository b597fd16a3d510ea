"""`specd mcp`: serve MCP on stdin and stdout, for Claude Code (`claude mcp add specd -- specd mcp`) or any client.

The `mcp` SDK is an extra; without it this says how to install it, as bad input, rather than failing to import.
"""

from __future__ import annotations

import click

from specd.commands.common import in_project, project_from
from specd.errors import UsageError


@click.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> int:
    """Serve specd over MCP (stdio) for an MCP client such as Claude Code: its
    tools list tasks (list_tasks), show one (show_task: plan, waits, cost),
    answer a held gate (approve, reject with a note, skip), start a task
    (continue_task, run_task: through the control plane when `specd ui` or
    `specd serve` runs, else in the background), cancel one, and read its
    log (logs); its resources are the tasks' documents
    (specd://tasks/TASK/PATH). Answers are recorded as from MCP, by your git
    identity. stdout is the protocol; nothing else is printed there."""
    project = in_project(project_from(ctx))
    try:
        from specd.mcp_server import server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise UsageError("`specd mcp` needs the MCP SDK, which is not installed",
                         fix="pip install 'specd-workflow[mcp]'") from None
    server.serve(project)
    return 0
