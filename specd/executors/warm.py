"""The executor's side of the zygote (see ``zygote``): start it once, ask it for runs, learn when they end.

``Forked`` offers what the executor uses of a ``subprocess.Popen``: ``pid``, ``stdout``, ``returncode`` and
``wait()``, so a forked run and a started one are read the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from specd.agents.proc import popen_child
from specd.executors import zygote
from specd.system import children


class Forked:
    def __init__(self, pid: int, stdout: IO[bytes]) -> None:
        self.pid, self.stdout = pid, stdout
        self.returncode: int | None = None
        self._done = threading.Event()

    def finish(self, code: int) -> None:
        self.returncode = code
        self._done.set()

    def wait(self, timeout: float | None = None) -> int | None:
        self._done.wait(timeout)
        return self.returncode


class Zygote:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.proc = popen_child([sys.executable, "-m", "specd.executors.zygote", str(theirs.fileno())],
                                env=dict(os.environ), pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        theirs.close()
        # One request at a time, so the next {"pid"} answers it. Its own lock: waiting on ``answered`` lets go
        # of that one, and a second request sent meanwhile could take the first one's pid (then its stop, its
        # wake and its exit code went to another task's run).
        self.asking = threading.Lock()
        self.pids: list[int] = []
        self.answered = threading.Condition(threading.Lock())
        self.runs: dict[int, Forked] = {}
        self.early: dict[int, int] = {}  # runs that ended before spawn() registered them
        self.gone = False
        threading.Thread(target=self._listen, daemon=True).start()

    def spawn(self, argv: list[str], cwd: Path, stderr: IO[bytes], env: Mapping[str, str] | None = None
              ) -> Forked:
        """Fork `specd <argv>` in ``cwd``, with ``env`` as its whole environment when given (else the zygote's).
        OSError when it cannot be had: the zygote ended, or the request is too big for one datagram."""
        request = json.dumps({"argv": argv, "cwd": str(cwd), **({"env": dict(env)} if env is not None else {})})
        if len(request.encode()) > zygote.BUFSIZE:
            raise OSError(f"a request of {len(request)} bytes does not fit the zygote's {zygote.BUFSIZE}")
        read, write = os.pipe()
        try:
            with self.asking, self.answered:
                socket.send_fds(self.sock, [request.encode()], [write, stderr.fileno()])
                while not self.pids and not self.gone:
                    self.answered.wait()
                if not self.pids:
                    raise OSError("the zygote ended")
                pid = self.pids.pop(0)
                run = Forked(pid, os.fdopen(read, "rb"))
                if pid in self.early:
                    run.finish(self.early.pop(pid))
                else:
                    self.runs[pid] = run
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)  # the run holds its own copy: its end is the pipe's end
        children.started(pid)  # the run leads its own session: a dead executor's leftovers are found by it
        return run

    def close(self) -> None:
        """End the zygote once every run is over, and reap it (its CPU time then counts as this process's)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the listener's recv; a bare close() would not
        self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        children.ended(self.proc.pid)

    def _listen(self) -> None:
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                break
            message: dict[str, Any] = json.loads(data)
            with self.answered:
                if "pid" in message:
                    self.pids.append(int(message["pid"]))
                    self.answered.notify_all()
                    continue
                pid, code = (int(v) for v in message["exit"])
                run = self.runs.pop(pid, None)
                if run is None:
                    self.early[pid] = code
                else:
                    run.finish(code)
        with self.answered:  # the zygote died (killed): every run it had died with it
            self.gone = True
            self.answered.notify_all()
            for run in self.runs.values():
                run.finish(-9)


_shared: Zygote | None = None


def shared() -> Zygote:
    """The executor's one zygote, started on first use (from the main thread, as PDEATHSIG needs)."""
    global _shared
    if _shared is None or _shared.gone:
        _shared = Zygote()
    return _shared


def start_shared() -> None:
    """Start the zygote now, when runs are coming; one that cannot start is tried again (and refused) at its
    first run, which then starts as a fresh Python."""
    with contextlib.suppress(OSError):
        shared()


def close_shared() -> None:
    global _shared
    if _shared is not None:
        _shared.close()
        _shared = None
