"""One task run as a child process: `specd --project <worktree> continue <task> --json`.

A child per task gives real parallelism, its own task lock and clean kill semantics; it calls the seam
like any `specd continue`. It is forked from the warm zygote (see ``warm``), or started as a fresh Python
when the zygote cannot be had. Its JSON event lines feed the live view; a reader thread per child puts them on
the executor's queue, so the executor's main thread (which starts every child, as PDEATHSIG needs) never
blocks on one child.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specd.agents.proc import popen_child
from specd.errors import EXIT_BAD_INPUT, said
from specd.executors import warm
from specd.system import children

# What a child's exit code says when it printed no run_finished event (a crash, a refusal). Exit 2 is not here: it
# stopped on bad input (a broken pipeline file, a missing API key), before its run could end in any status, and
# ``bad_input`` says which.
EXIT_STATUS = {0: "COMPLETE", 1: "BLOCKED", 3: "WAITING_FOR_HUMAN", 4: "CANCELLED", 130: "ABORTED"}


@dataclass
class Child:
    task: str
    proc: subprocess.Popen[bytes] | warm.Forked
    errors: Any  # a temporary file holding the child's stderr
    started: float
    step: str = ""
    tokens: int = 0
    cost: float = 0.0  # spent by this child's run since it started
    finished: dict[str, Any] = field(default_factory=dict)
    envelope: dict[str, Any] = field(default_factory=dict)  # the closing `--json` line: its error, when it failed

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)  # the child saves its state and ends ABORTED

    def stderr_tail(self) -> str:
        self.errors.seek(0)
        lines = self.errors.read().decode("utf-8", "replace").strip().splitlines()
        return "\n".join(lines[-5:])


def start(task: str, tree: Path, options: list[str], inbox: queue.Queue[tuple[str, dict[str, Any] | None]],
          now: float) -> Child:
    argv = ["--project", str(tree), "continue", task, "--json", *options]
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed in ended()); outside the worktree: specd's own output is never committed
    proc: subprocess.Popen[bytes] | warm.Forked
    try:
        proc = warm.shared().spawn(argv, tree, errors)
    except OSError:  # no zygote (it could not start, or died): a fresh Python does the same, only slower
        proc = popen_child([sys.executable, "-m", "specd", *argv], env=dict(os.environ), cwd=tree,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
    child = Child(task, proc, errors, now)
    threading.Thread(target=_read, args=(child, inbox), daemon=True).start()
    return child


def _read(child: Child, inbox: queue.Queue[tuple[str, dict[str, Any] | None]]) -> None:
    assert child.proc.stdout is not None
    for raw in child.proc.stdout:
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # not an event line (a stray print); the live view needs none of it
        # An event has a kind; the child's closing `--json` envelope has none, and the run prints its own summary.
        if isinstance(event, dict) and "kind" in event:
            inbox.put((child.task, event))
        elif isinstance(event, dict) and "ok" in event:
            child.envelope = event  # read before the None below is: the same thread puts both
    child.proc.wait()
    inbox.put((child.task, None))  # None: the child is gone


def ended(child: Child) -> None:
    children.ended(child.proc.pid)
    child.errors.close()


def bad_input(child: Child) -> str | None:
    """The error the child stopped on when it was bad input (exit 2 with no run_finished: the pipeline file does not
    load, the agent has no key, the task's lock is held), with its fix; None when its run ended otherwise."""
    if child.finished or child.proc.returncode != EXIT_BAD_INPUT:
        return None
    error = child.envelope.get("error")
    error = error if isinstance(error, dict) else {}
    message, fix = str(error.get("message") or ""), error.get("fix")
    if not message:
        return said(child.stderr_tail()) or f"specd continue {child.task} exited with {EXIT_BAD_INPUT}"
    return f"{message}\n  fix: {fix}" if fix else message


def status_of(child: Child) -> tuple[str, str]:
    """The status and reason the child ended with (``bad_input`` first: this one has no status for that)."""
    if child.finished:
        return str(child.finished.get("status")), str(child.finished.get("reason") or "")
    code = child.proc.returncode
    status = EXIT_STATUS.get(code, "FAILED") if code is not None and code >= 0 else "ABORTED"
    return status, child.stderr_tail() or f"specd continue {child.task} exited with {code}"
