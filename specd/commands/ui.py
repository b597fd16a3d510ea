"""`specd ui` and `specd serve`: the project's control plane, serving the dashboard.

The page is served from a thread; the main thread runs the control plane (executors/plane.py), which starts
every task answered anywhere and every task the page asks for. Its children are started from the main thread,
which lives as long as the process, as the executor's die-with-parent setting needs.
"""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

import click

from specd.commands.common import in_project, project_from, warn
from specd.commands.envelope import emit, json_option
from specd.tasks.secrets import load_project_secrets


def _options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed((
        click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
                     help="The port to listen on (0: any free port)."),
        click.option("--host", default="127.0.0.1", show_default=True,
                     help="The address to listen on. Anything but loopback lets other machines in: pass --token too."),
        click.option("--token", metavar="T", help="The access token (default: a new random one each start)."),
        click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
                     help="Serve HTTPS with this certificate (chain), so the token never crosses a network in "
                          "plain text; with --tls-key."),
        click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
                     help="The private key of --tls-cert."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
                     help="How many tasks the control plane runs at once (default: the number of CPUs, at least 2)."),
        json_option("Print the address as a JSON envelope ({ok, task, url}) on the first line instead."),
    )):
        command = option(command)
    return command


@click.command("ui")
@_options
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@click.pass_context
def ui(ctx: click.Context, port: int, host: str, token: str | None, tls_cert: str | None, tls_key: str | None,
       jobs: int | None, as_json: bool, no_browser: bool) -> int:
    """Serve the dashboard for this project and run what is answered: every
    task, its steps, cost and events, live; approve, reject, skip, cancel,
    retry, rerun, Run and Continue from the page.

    This is the project's control plane: a task answered on the page, by
    `specd approve` in any terminal, or from another clone (`specd approve
    TASK --server URL`) goes on by itself within a second, in its home (the
    main tree or its worktree). One runs per project; a second `specd ui`,
    `specd serve` or `specd run --keep-waiting` is refused, naming it.

    The first line printed is the address with the access token; the browser
    keeps the token in a cookie. Stop with Ctrl-C (running tasks save their
    state and stop, ABORTED; Run on the page, `specd run` or `specd continue`
    resumes them).
    """
    return _serve(ctx, "specd ui", port, host, token, jobs, as_json, browser=not no_browser, tls=(tls_cert, tls_key))


@click.command("serve")
@_options
@click.pass_context
def serve(ctx: click.Context, port: int, host: str, token: str | None, tls_cert: str | None, tls_key: str | None,
          jobs: int | None, as_json: bool) -> int:
    """The control plane without a browser: `specd ui --no-browser`. It runs
    every task answered anywhere and serves the dashboard and the API that
    `specd approve TASK --server URL` uses. Stop with Ctrl-C."""
    return _serve(ctx, "specd serve", port, host, token, jobs, as_json, browser=False, tls=(tls_cert, tls_key))


def _serve(ctx: click.Context, command: str, port: int, host: str, token: str | None, jobs: int | None,
           as_json: bool, *, browser: bool, tls: tuple[str | None, str | None] = (None, None)) -> int:
    try:
        import uvicorn

        from specd.web import auth
        from specd.web.app import create_app
    except ModuleNotFoundError as exc:
        from specd import DISTRIBUTION
        from specd.errors import UsageError

        raise UsageError(f"the dashboard needs {exc.name}, which is not installed",
                         fix=f"pip install '{DISTRIBUTION}[ui]'") from None
    from specd.executors.claim import Claim
    from specd.executors.plane import ControlPlane
    from specd.executors.results import Settings

    project = in_project(project_from(ctx))
    load_project_secrets(project.root)  # pages show task output that may hold .env values
    if token is not None and len(token) < 16:
        raise click.BadParameter("use at least 16 characters", param_hint="--token")
    https = _tls(*tls)
    warning = auth.exposure_warning(host, token is not None, https)
    secret = token or auth.new_token()
    with Claim(project, command) as claim:
        plane = ControlPlane(project, Settings() if jobs is None else Settings(jobs=jobs), _say, serve=True)
        listener = _bind(host, port)
        shown = f"[{host}]" if ":" in host else host
        url = f"{'https' if https else 'http'}://{shown}:{listener.getsockname()[1]}/?token={secret}"
        claim.serving(url)
        warn([warning] if warning else [])  # stderr, and first: a Ctrl-C at once must not swallow it
        if as_json:
            emit(None, indent=None, url=url)
        else:
            click.echo(url)  # the first line on stdout, as scripts and tests read it
        click.echo(f"{command}: serving, and running what is answered; Ctrl-C stops it", err=True)
        if browser:
            import webbrowser

            webbrowser.open(url)
        # Open event streams must not hold Ctrl-C up: they get a second to end.
        config = uvicorn.Config(create_app(project, secret, plane), log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=1, ssl_certfile=tls[0], ssl_keyfile=tls[1])
        server = uvicorn.Server(config)

        def pages() -> None:
            try:
                server.run(sockets=[listener])
            finally:
                plane.interrupt()  # no page without the plane, no plane without the page

        def stop(signum: int, frame: Any) -> None:
            server.should_exit = True
            plane.interrupt()

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        thread = threading.Thread(target=pages, name="specd-ui-pages", daemon=True)
        thread.start()
        try:
            plane.run([])
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return 0


def _say(task: str, event: dict[str, Any]) -> None:
    """What the control plane did, a line each on stderr (the page shows the rest)."""
    kind = event.get("kind")
    if kind == "task_started":
        where = "the main tree" if event.get("home") == "main" else event.get("worktree")
        click.echo(f"specd: {task}: started in {where}", err=True)
    elif kind == "task_finished":
        reason = f" ({event['reason']})" if event.get("reason") and event.get("status") != "COMPLETE" else ""
        click.echo(f"specd: {task}: {event.get('status')}{reason}", err=True)
    elif kind == "task_broken":
        click.echo(f"specd: {task + ': not started' if task else 'tasks'}: {event.get('reason')}", err=True)
    elif kind in ("notice", "task_elsewhere"):
        click.echo(f"specd: {task}: {event.get('message') or event.get('reason')}", err=True)


def _tls(cert: str | None, key: str | None) -> bool:
    """Whether the page is served over HTTPS: the pair given, and loadable (checked here, where a bad file is bad
    input with its fix, not an error in the server's thread once the address was printed)."""
    if (cert is None) != (key is None):
        raise click.BadParameter("pass --tls-cert and --tls-key together", param_hint="--tls-cert/--tls-key")
    if cert is None or key is None:
        return False
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        from specd.errors import UsageError

        raise UsageError(f"--tls-cert {cert} with --tls-key {key}: not a certificate and its key ({exc})",
                         fix="pass a PEM certificate (chain) and the PEM private key it was made with") from None
    return True


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
