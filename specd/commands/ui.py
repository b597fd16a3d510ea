"""`specd ui`: the local dashboard."""

from __future__ import annotations

import contextlib
import socket

import click

from specd.commands.common import in_project, project_from, warn
from specd.commands.envelope import emit, json_option
from specd.tasks.secrets import load_project_secrets


@click.command("ui")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="The port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Anything but loopback lets other machines in: pass --token too.")
@click.option("--token", metavar="T", help="The access token (default: a new random one each start).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@json_option("Print the address as a JSON envelope ({ok, task, url}) on the first line instead.")
@click.pass_context
def ui(ctx: click.Context, port: int, host: str, token: str | None, no_browser: bool, as_json: bool) -> int:
    """Serve the dashboard for this project: every task, its steps, cost and
    events, live; approve, reject, skip, cancel, retry and rerun from the page.

    The first line printed is the address with the access token; the browser
    keeps the token in a cookie. Stop with Ctrl-C.
    """
    try:
        import uvicorn

        from specd.web import auth
        from specd.web.app import create_app
    except ModuleNotFoundError as exc:
        from specd import DISTRIBUTION
        from specd.errors import UsageError

        raise UsageError(f"the dashboard needs {exc.name}, which is not installed",
                         fix=f"pip install '{DISTRIBUTION}[ui]'") from None
    project = in_project(project_from(ctx))
    load_project_secrets(project.root)  # pages show task output that may hold .env values
    if token is not None and len(token) < 16:
        raise click.BadParameter("use at least 16 characters", param_hint="--token")
    warning = auth.exposure_warning(host, token is not None)
    secret = token or auth.new_token()
    listener = _bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{listener.getsockname()[1]}/?token={secret}"
    warn([warning] if warning else [])  # stderr, and first: a Ctrl-C at once must not swallow it
    if as_json:
        emit(None, indent=None, url=url)
    else:
        click.echo(url)  # the first line on stdout, as scripts and tests read it
    click.echo("specd ui: serving; Ctrl-C stops it", err=True)
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    # Open event streams must not hold Ctrl-C up: they get a second to end.
    config = uvicorn.Config(create_app(project, secret), log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=1)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a server is meant to stop
        uvicorn.Server(config).run(sockets=[listener])
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the address is printed, so the printed port is the real one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        from specd.errors import UsageError

        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}",
                         fix="pick another --port (0 takes any free one) or --host") from None
    listener.listen(128)
    return listener
