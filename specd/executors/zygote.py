"""A warm parent for task runs: one process that imported specd once and forks a `specd continue` per task.

Starting a fresh Python per task costs about 0.3 s of CPU in imports alone, which twenty tasks on two cores
cannot afford beside their steps. The zygote pays that once. It is single-threaded (so forking it is safe),
dies with the executor (PDEATHSIG), and each forked run dies with the zygote, leads its own session and
gets its stdout and stderr as file descriptors the executor passed over the socket (SCM_RIGHTS), so the
executor reads the run's JSON event lines exactly as from a child process.

Protocol, one datagram each way on a SOCK_SEQPACKET socket:
  executor -> zygote: {"argv": [...], "cwd": "...", "env": {...}} with fds [stdout, stderr]; "env" (optional)
                      is the run's whole environment, in place of the zygote's
  zygote -> executor: {"pid": N} right after the fork, then {"exit": [N, code]} when that run ends

A run's end wakes the zygote at once (SIGCHLD through a wake-up pipe), so whoever waits on it learns of the end
as soon as a started child's parent would; the loop's timeout is only a safety net.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable

# Everything a `specd continue --json` with a command or scripted agent imports, loaded once here.
PRELOAD = ("specd.cli", "specd.commands.continue_", "specd.engine.seam", "specd.engine.runner",
           "specd.agents.factory", "specd.agents.command", "specd.agents.scripted", "specd.git.recorder",
           "specd.pipeline.load", "specd.state.store", "specd.tasks.status", "filelock", "frontmatter", "jsonschema",
           "specd.commands.terminal.human", "specd.commands.terminal.live", "specd.commands.examples",
           "specd.pipeline.schema", "specd.tasks.markdown", "specd.system.probe", "markdown_it", "psutil",
           "specd.tasks.readmodel.own", "specd.tasks.readmodel.rows", "specd.system.fanout", "specd.system.binds",
           "specd.executors.temporal.elsewhere",
           "rich._emoji_codes")  # the read model: the run's own row, written as it stops
# What every run builds once and keeps (each is cached where it is made): the markdown parser, the compiled
# pipeline schema, whether bubblewrap can start a jail here (a `bwrap true` of its own), and the regular
# expressions specd compiles at their first use. Made here, the forked runs inherit them instead of each making
# its own.
WARM = (("specd.tasks.markdown", "_parser"), ("specd.pipeline.schema", "_validator"),
        ("specd.system.probe", "bwrap_usable"), ("specd.system.lazyre", "compile_all"))
# The same for what the machine may change while a zygote lives (a control plane's lives for days): what in /etc
# only root may read, which every jail covers with empty files (a walk of /etc). It is made again before a run is
# forked once it is FRESH seconds old, so a forked run's view is never older than that at its start, as a run of
# its own has it.
AGING = (("specd.system.binds", "_etc_secrets"), ("specd.system.binds", "_machine_keys"))
FORGOTTEN = (("specd.system.binds", "_tool_keys"),)  # the same, per set of tool folders: made again in the run
FRESH = 60.0
BUFSIZE = 1 << 16


def preload() -> None:
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # a missing optional part is imported (and fails) in the run
            importlib.import_module(name)
    for module, function in WARM:
        with contextlib.suppress(Exception):  # whatever fails here fails again, and is reported, in the run
            getattr(sys.modules[module], function)()
    refresh()


_made = -FRESH  # when AGING was last made (monotonic)


def refresh(now: float | None = None) -> None:
    """Make AGING again when it is older than FRESH (see there) at ``now`` (monotonic seconds)."""
    global _made
    now = time.monotonic() if now is None else now
    if now - _made < FRESH:
        return
    for module, function in AGING:
        with contextlib.suppress(Exception):  # as in WARM: the run makes it, and reports, itself
            made = getattr(sys.modules[module], function)
            made.cache_clear()
            made()
    for module, function in FORGOTTEN:
        with contextlib.suppress(Exception):
            getattr(sys.modules[module], function).cache_clear()
    _made = now


def run(argv: list[str], cwd: str, out: int, err: int, die: Callable[[], None] | None,
        env: dict[str, str] | None = None) -> int:
    """In the forked child: become `specd <argv>` as if started fresh in ``cwd``, with ``env`` applied."""
    os.setsid()
    if die is not None:
        die()  # made in the zygote before the fork: it names the zygote as the parent to die with
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh Python: KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
        os.close(source)
    os.chdir(cwd)
    from specd.cli import main

    try:
        result = main(argv)
        code = result if isinstance(result, int) else 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 (the run's own handler prints; this only keeps the zygote's loop out)
        import traceback

        traceback.print_exc()
        code = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def serve(sock: socket.socket) -> None:
    from specd.system import children

    die = children.die_with_parent()
    running: set[int] = set()
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    woken, wake = os.pipe()
    os.set_blocking(woken, False)
    os.set_blocking(wake, False)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # a handler, so the signal reaches the pipe
    signal.set_wakeup_fd(wake)
    selector.register(woken, selectors.EVENT_READ)
    while True:
        ready = {key.fileobj for key, _events in selector.select(timeout=1.0)}  # the timeout: a safety net only
        if woken in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(woken, 4096)
        if sock in ready:
            data, fds, _flags, _addr = socket.recv_fds(sock, BUFSIZE, 2)
            if not data:  # the executor is gone: its runs go with this process (PDEATHSIG)
                return
            request = json.loads(data)
            refresh()
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                sock.close()
                signal.set_wakeup_fd(-1)  # the zygote's wake-up pipe is not this run's to write to
                os.close(woken)
                os.close(wake)
                os._exit(run(list(request["argv"]), str(request["cwd"]), fds[0], fds[1], die, request.get("env")))
            for fd in fds:
                os.close(fd)
            running.add(pid)
            sock.send(json.dumps({"pid": pid}).encode())
        for pid in list(running):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                running.discard(pid)
                sock.send(json.dumps({"exit": [pid, os.waitstatus_to_exitcode(status)]}).encode())


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the executor's to handle, run by run
    preload()
    serve(socket.socket(fileno=int(sys.argv[1])))


if __name__ == "__main__":
    main()
