"""Running the agent's shell commands: own process group, clean env, timeout, capped output."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from specd import children
from specd.agents.anthropic.sandbox import command_env
from specd.agents.proc import popen_child

MAX_OUTPUT = 20_000  # characters the model gets back; more only costs tokens


def truncate(text: str, limit: int = MAX_OUTPUT) -> str:
    """Keep the head and the tail: errors tend to be at the end, context at the start."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters truncated ...]\n{text[-half:]}"


def run(command: str, cwd: Path, timeout: float) -> tuple[str, bool]:
    """Run ``command``; return (report for the model, is_error)."""
    # popen_child: a new session puts the command and its children in one process group, so a
    # timeout kills the whole tree; and the command dies with specd, even on SIGKILL.
    proc = popen_child(command, shell=True, cwd=cwd, env=command_env(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        text = out.decode("utf-8", "replace")
        return truncate(f"timed out after {timeout:g} s; the command was killed\n{text}"), True
    except BaseException:
        # Ctrl-C reaches our process group, not the command's: stop it ourselves.
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        children.ended(proc.pid)
    text = out.decode("utf-8", "replace")
    return truncate(f"exit code {proc.returncode}\n{text}"), proc.returncode != 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited on its own meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
