"""Running a shell command in its own process group, for command agents and `run:` hooks.

A separate session means Ctrl-C at specd's terminal does not reach the child
directly; specd stops the whole group itself (TERM, then KILL), so nothing
the command spawned is left running behind a stopped run. Every child is
started through ``popen_child``, so it also dies when specd is killed outright
(see ``specd.system.children``).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from specd.agents import lines, numbered
from specd.system import children
from specd.system.jail import Jail, prepare

UNJAILED = Jail("agent", enabled=False)  # a caller that names no jail runs its command as it is


@dataclass(frozen=True)
class ProcOutcome:
    returncode: int
    timed_out: bool
    log: Path

    def tail(self, chars: int) -> str:
        return lines.tail(self.log, chars).strip()  # the end of the log only: it may be huge


_NEXT: dict[Path, int] = {}  # each run folder's next number, once this process has listed it


def transcript_path(task_dir: Path, run_id: str, label: str, suffix: str) -> Path:
    """``transcripts/<run_id>/<NNN>-<label><suffix>``, numbered in the order they were made.

    The file is created here (exclusively: a name taken meanwhile is skipped, never overwritten). The next
    number of each run folder is kept in memory once the folder was listed: a run is one process, and
    listing a folder that gains a file every step, at every step, made steps cost more as a run went on.
    """
    folder = task_dir / "transcripts" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    number = _NEXT.get(folder)
    if number is None:  # the folder is listed once a run, not at every step: it holds a file per step
        with os.scandir(folder) as entries:
            number = max((n for e in entries if (n := numbered.number(e.name)) is not None), default=0) + 1
    while True:
        path = folder / f"{number:03d}-{label}{suffix}"
        try:
            path.open("x").close()
        except FileExistsError:
            number += 1
            continue
        _NEXT[folder] = number + 1
        return path


def run_group(command: str, *, cwd: Path, env: Mapping[str, str], stdin: str | None, log: Path,
              timeout: float | None, jail: Jail = UNJAILED) -> ProcOutcome:
    launch = prepare(command, cwd, jail, env)  # the one jail: bubblewrap, or the command as it is
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        # Output goes through specd, line by line (capped, see ``lines``), so a secret never reaches the disk
        # even if specd is killed before the command ends.
        proc = popen_child(launch.args, shell=launch.shell, cwd=cwd, env=launch.env, guarded=launch.guarded,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT,
                           stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        feeder = threading.Thread(target=_feed, args=(proc, stdin), daemon=True)
        pump = threading.Thread(target=_pump, args=(proc, sink), daemon=True)
        feeder.start()
        pump.start()
        try:
            timed_out = not wait_exit(proc, timeout)
            if timed_out:
                stop_group(proc)
        except BaseException:
            stop_group(proc)  # KeyboardInterrupt or SIGTERM: the whole tree goes with us
            raise
        finally:
            children.ended(proc.pid)  # first: a leftover grandchild holding the pipe is killed, so the pump ends
            feeder.join(timeout=1)
            pump.join(timeout=5)  # a background grandchild may keep the pipe open; its output is not ours
    return ProcOutcome(proc.returncode if proc.returncode is not None else -1, timed_out, log)


def wait_exit(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Block until ``proc`` exits (True) or ``timeout`` passes (False), asleep in the kernel the whole time.

    ``Popen.wait(timeout=...)`` polls: it sleeps and looks again, up to 50 ms late each time, for every step.
    A pidfd (Linux 5.3+) becomes readable the moment the process exits, so the step ends when the agent
    does; elsewhere, or for a process already reaped, the polling wait stands in."""
    try:
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
    finally:
        os.close(handle)
    if not ready:
        return False
    proc.wait()  # it has exited: this reaps it at once
    return True


def popen_child(args: str | list[str], *, env: Mapping[str, str], guarded: bool = False,
                **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` for every child specd starts (agents, hooks, the agent's commands, CLI backends).

    The child leads a new session (its own process group, away from specd's
    terminal), dies with specd, carries the run's owner marker in ``env``, and
    its group is recorded in the lock's owner file until ``children.ended``.
    The caller must call ``children.ended(proc.pid)`` once the child is gone.

    ``guarded``: the child sets its own death signal (``Launch.guarded``: bubblewrap or the keeper). Then no
    ``preexec_fn`` runs, and Python starts the child with vfork: a fork copies specd's page tables, and the
    copy costs more than the rest of a jailed ``cmd:true`` spawn (5 ms of CPU against 1).
    """
    death = None if guarded else children.die_with_parent()
    with children.starting():  # no sweep runs between its start and its record (a parallel group's members)
        proc: subprocess.Popen[bytes] = subprocess.Popen(  # preexec_fn: the only way to prctl the child
            args, env=children.child_env(env), start_new_session=True, preexec_fn=death, **kwargs)
        children.started(proc.pid)
    return proc


def _feed(proc: subprocess.Popen[bytes], text: str | None) -> None:
    if proc.stdin is None:
        return
    try:
        if text:
            proc.stdin.write(text.encode("utf-8"))
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the command chose not to read its prompt; that is allowed


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in children.STOPPING:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _pump(proc: subprocess.Popen[bytes], sink: BinaryIO) -> None:
    if proc.stdout is None:
        return
    with contextlib.suppress(OSError, ValueError):  # ValueError: the log was closed after a stuck grandchild
        lines.pump(proc.stdout, sink)
