"""`python -m specd ...` for the tests, forked from a warm specd instead of started cold.

The suite starts specd thousands of times, and each cold start spends most of its CPU importing specd again. Here
each pytest process keeps one of specd's own zygotes (``specd.executors.warm``: the warm parent `specd run` forks
every task run from), and a call becomes a real process of its own forked from it: its own pid and session, the
given environment and folder, stdout and stderr on pipes, its exit code. What a fork cannot be, the call gets a
cold start for, as before: input on stdin, an environment that changes how Python itself starts (``PYTHON*``), or
no zygote to be had (``SPECD_TESTS_COLD=1`` asks for cold starts everywhere).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_zygote: Any = None
_lock = threading.Lock()
STARTUP = ("PYTHONPATH", "PYTHONHOME", "PYTHONHASHSEED", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONUTF8",
           "PYTHONIOENCODING", "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONMALLOC", "PYTHONSTARTUP", "LANG", "LC_ALL",
           "LC_CTYPE")


def run(argv: Sequence[str], *, cwd: Path | str, env: Mapping[str, str] | None, timeout: float | None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """As ``subprocess.run(argv, capture_output=True, text=True, stdin=DEVNULL or input)`` for ``argv`` of the
    form ``[sys.executable, "-m", "specd", ...]``."""
    whole = dict(os.environ if env is None else env)
    if input is not None or not _forkable(argv, whole):
        return _cold(argv, whole, cwd, timeout, input)
    with tempfile.TemporaryFile() as err:
        try:
            forked = _warm().spawn(list(argv[3:]), Path(cwd), err, whole)
        except OSError:  # no zygote to be had, or a request too big for its datagram: a cold start, as before
            return _cold(argv, whole, cwd, timeout, input)
        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.append(forked.stdout.read()), daemon=True)
        reader.start()
        code = forked.wait(timeout)
        if code is None:  # as subprocess.run: the process is killed, then the timeout is raised
            _kill(forked.pid)
            forked.wait(10)
            reader.join(5)
            raise subprocess.TimeoutExpired(list(argv), timeout or 0, b"".join(chunks), _read(err))
        _forget(forked.pid)
        reader.join(timeout)  # the pipe ends once every process holding it ended, as subprocess.run waits for it
        if reader.is_alive():  # a process it left holds stdout open: as subprocess.run, a timeout
            raise subprocess.TimeoutExpired(list(argv), timeout or 0, b"".join(chunks), _read(err))
        forked.stdout.close()
        out = b"".join(chunks).decode("utf-8", errors="replace")
        return subprocess.CompletedProcess(list(argv), code, out, _read(err).decode("utf-8", errors="replace"))


def _cold(argv: Sequence[str], env: dict[str, str], cwd: Path | str, timeout: float | None,
          input: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), input=input, stdin=None if input is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False)


def _forkable(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    if os.environ.get("SPECD_TESTS_COLD") or list(argv[:3]) != [sys.executable, "-m", "specd"]:
        return False
    return all(env.get(name) == os.environ.get(name) for name in STARTUP)


def _warm() -> Any:
    global _zygote
    from specd.executors.warm import Zygote

    with _lock:
        if _zygote is None or _zygote.gone:
            _zygote = Zygote()
        return _zygote


def _forget(pid: int) -> None:
    """The spawn recorded the run as a child whose leftovers specd kills when it ends (``specd.system.children``):
    a cold `python -m specd` is nobody's such child, so what it leaves is left alone here too."""
    from specd.system import children

    with children._live_lock:
        children._live.pop(pid, None)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the forked run leads its own session: its children go too
        os.killpg(pid, signal.SIGKILL)


def _read(handle: Any) -> bytes:
    handle.seek(0)
    return bytes(handle.read())
