"""One process of an agent CLI (Claude Code, Codex, the Gemini CLI) in the agent tier of the jail, its JSON lines
read as they come.

Like every child of specd it runs in its own session, dies with specd and is recorded in the lock's owner
file. The prompt goes to stdin (argv form, no shell); stderr is kept (its last lines explain a failure). The
step's timeout, a limit the reader reached (Codex's turns), or an interrupt stops the whole process group.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TypeVar

from specd.agents import lines
from specd.agents.base import AgentFailed
from specd.agents.proc import popen_child, stop_group
from specd.redact import redact
from specd.system import children
from specd.system.jail import Jail, prepare

STDERR_LINES = 200
JSON_LIMIT = 4 * 1024 * 1024  # an event line holds a whole message or command output; longer ones are cut
T = TypeVar("T")


def run_cli(argv: list[str], prompt: str, cwd: Path, jail: Jail, env: Mapping[str, str],
            timeout: float | None, read: Callable[[Iterator[str]], T],
            stopped: Callable[[T], bool] = lambda _: False) -> tuple[int, T, list[str]]:
    """(exit status, what ``read`` made of stdout's lines, stderr's last lines). ``stopped`` says whether the
    reader gave up before the end (a turn limit reached), and so the CLI is to be ended."""
    if shutil.which(argv[0]) is None:  # said plainly here; inside the jail it would be bwrap's execvp error
        raise AgentFailed(f"could not start {argv[0]}: {os.strerror(errno.ENOENT)}")
    launch = prepare(argv, cwd, jail, env)
    try:
        proc = popen_child(launch.args, cwd=cwd, env=launch.env, guarded=launch.guarded, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise AgentFailed(f"could not start {argv[0]}: {exc.strerror or exc}") from None
    stderr: list[str] = []
    helpers = [threading.Thread(target=_feed, args=(proc, prompt), daemon=True),
               threading.Thread(target=_drain, args=(proc, stderr), daemon=True)]
    for helper in helpers:
        helper.start()
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        stop_group(proc)

    watchdog = threading.Timer(timeout, expire) if timeout else None
    if watchdog:
        watchdog.daemon = True
        watchdog.start()
    try:
        result = read(_lines(proc))
        if stopped(result):
            stop_group(proc)
        proc.wait()
    except BaseException:
        stop_group(proc)  # Ctrl-C or SIGTERM: the CLI and its tool processes go with us
        raise
    finally:
        children.ended(proc.pid)
        if watchdog:
            watchdog.cancel()
    for helper in helpers:
        helper.join(timeout=5)
    if timed_out.is_set():
        raise AgentFailed(f"timed out after {timeout:g} s")
    return proc.returncode, result, [line for line in stderr if line.strip()]


def _lines(proc: subprocess.Popen[bytes]) -> Iterator[str]:
    assert proc.stdout is not None
    for line in lines.read_lines(proc.stdout, JSON_LIMIT):
        yield lines.text_of(line, str, JSON_LIMIT)  # redacted by the reader, before it is written


def _feed(proc: subprocess.Popen[bytes], prompt: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(prompt.encode("utf-8"))
        proc.stdin.close()
    except OSError:
        pass  # the CLI exited before reading (a bad flag); its stderr says why


def _drain(proc: subprocess.Popen[bytes], into: list[str]) -> None:
    assert proc.stderr is not None
    clean = lines.Redactor()
    for line in lines.read_lines(proc.stderr):
        into.append(lines.text_of(line, clean))
        del into[:-STDERR_LINES]


def json_events(lines: Iterable[str], transcript: IO[str], plain: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    """Each JSON object a CLI printed, one a line, after the line is written (redacted) to the transcript; any
    other line (the plain text a CLI prints when it fails before streaming, a line cut at the cap) goes to
    ``plain``, stripped."""
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        transcript.write(redact(line) + "\n")
        transcript.flush()
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # a tool call's input nested past json's depth: a plain line
            plain(line.strip())
            continue
        if isinstance(event, dict):
            yield event
