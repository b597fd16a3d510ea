"""The agent's shell commands: what may run, and running it.

A command runs in its own process group with a clean environment, a timeout
and capped output, in the project tier of the jail (``specd.system.jail``).
Before that, in either mode, the line must pass the allowlist (or a human) and
may not name a path outside the project, in any form the shell or the program
would read it: ``../x``, ``/etc``, ``~``, ``--output=../x``, ``-o../x``, a link
that leads out. Where the jail is not bubblewrap, the line runs as an argv list
without a shell, so no glob or link is expanded behind that check.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
import re
import shlex
import signal
import stat
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from specd.agents import lines
from specd.agents.proc import popen_child
from specd.redact import scrubbed_env
from specd.system import children
from specd.system import jail as jails
from specd.system.machinery import machinery

MAX_OUTPUT = 20_000  # characters the model gets back; more only costs tokens
# A pattern such as "pytest*" must not approve "pytest; rm -rf ~": commands
# that chain, redirect or substitute are never allowlisted, whatever they start
# with. Substitution runs even inside double quotes, so it is checked on the raw line.
_SUBSTITUTION = re.compile(r"`|\$\(|\n")
# Where a path can hide inside one argument: after '=' or ':', in a list, in quoted code.
_PIECES = re.compile(r"[=:,;'\"(){}\[\]\s]+")
_GLOB_LIMIT = 10_000  # a glob that matches more paths than this is refused rather than checked slowly
_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def command_allowed(command: str, patterns: Iterable[str]) -> bool:
    line = command.strip()
    if _SUBSTITUTION.search(line) or _chains(line):
        return False
    return any(fnmatch.fnmatchcase(line, pattern) for pattern in patterns)


def needs_shell(command: str) -> str | None:
    """Why ``command`` cannot run without a shell (chaining, redirection, substitution), or None."""
    if _SUBSTITUTION.search(command) or _chains(command.strip()):
        return ("without bubblewrap, commands run without a shell, so pipes, redirections, ';', '&&' and "
                "substitutions are refused; run one command at a time")
    return None


def shell_free(jail: jails.Jail) -> bool:
    """True when the command must run as an argv list: the jail is off, or not bubblewrap here."""
    return not (jail.enabled and jails.active())


def _chains(line: str) -> bool:
    """True if the line has a shell operator outside quotes (or cannot be parsed)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    try:
        return any(token and set(token) <= set("();<>|&") for token in lexer)
    except ValueError:
        return True


def escape(command: str, root: Path) -> str | None:
    """Why ``command`` would reach outside ``root`` or into specd's machinery or ``.git``, or None.

    Every piece of every argument is checked as a path, whether it exists or not (``--output=.git/hooks/x``
    names a file the command would create), and a glob is checked through every path it matches now.
    """
    if "$" in command:
        return "it expands a variable ($...), which could name any path; write the value out"
    try:
        tokens = shlex.split(command)
    except ValueError as err:
        return f"it cannot be parsed ({err})"
    for token in tokens:
        for piece in filter(None, _PIECES.split(token)):
            # "-o../x" is an option glued to its value: check the value too.
            for candidate in {piece, re.sub(r"^-+[A-Za-z]", "", piece)}:
                if candidate and (reason := _refused(candidate, root)):
                    return reason
    return None


def _refused(piece: str, root: Path) -> str | None:
    if piece in _HARMLESS:
        return None
    if piece.startswith("~"):
        return f"{piece!r} is in a home folder, outside the project"
    path = Path(piece)
    if set(piece) & set("*?["):
        if any(part.startswith(".") for part in path.parts):
            return f"{piece!r} is a glob that can match '..' or a hidden folder such as .git"
        if path.is_absolute():
            return f"{piece!r} is a glob outside the project root {root}"
        # The shell's own rules (glob.glob's): '*' skips hidden names such as .git, as the shell would.
        matches = glob.iglob(piece, root_dir=root)  # noqa: PTH207 - Path.glob matches hidden names, the shell not
        for count, match in enumerate(matches):
            if count >= _GLOB_LIMIT:
                return f"{piece!r} matches more than {_GLOB_LIMIT} paths; name them more narrowly"
            if reason := _refused(match, root):
                return f"{piece!r} matches {match!r}: {reason}"
        return None
    target = path if path.is_absolute() else root / path
    if not (path.is_absolute() or ".." in path.parts or os.path.lexists(target)):
        # A word, or a file the command may create: its place is still checked, lexically.
        return _machinery(piece, Path(os.path.normpath(target)), root)
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):
        return f"{piece!r} cannot be resolved (a symlink loop or a bad name)"
    if not resolved.is_relative_to(root):
        return f"{piece!r} resolves outside the project root {root}"
    if (reason := _machinery(piece, target, root)) or (reason := _machinery(piece, resolved, root)):
        return reason
    with contextlib.suppress(OSError):
        info = resolved.stat()
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return f"{piece!r} has {info.st_nlink} hard links, and another may be outside the project"
    return None


def _machinery(piece: str, path: Path, root: Path) -> str | None:
    if not path.is_relative_to(root):
        return None
    why = machinery(path.relative_to(root).parts)
    if why is None:
        return None
    return (f"{piece!r} is specd's machinery or git's own folder ({why}); commands may not name it, "
            "read it with read_file")


def command_env(environ: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """The environment for agent commands: the user's, without credentials (``agent.env_allow`` kept)."""
    return scrubbed_env(environ, allow)


def truncate(text: str, limit: int = MAX_OUTPUT) -> str:
    """Keep the head and the tail: errors tend to be at the end, context at the start."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters truncated ...]\n{text[-half:]}"


def run(command: str, cwd: Path, timeout: float, *, env: Mapping[str, str], jail: jails.Jail) -> tuple[str, bool]:
    """Run ``command``; return (report for the model, is_error). The caller checked ``needs_shell``
    when ``shell_free(jail)``."""
    launch = jails.prepare(shlex.split(command) if shell_free(jail) else command, cwd, jail, env, model=True)
    # popen_child: a new session puts the command and its children in one process group, so a
    # timeout kills the whole tree; and the command dies with specd, even on SIGKILL.
    try:
        proc = popen_child(launch.args, shell=launch.shell, cwd=cwd, env=launch.env, guarded=launch.guarded,
                           stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as err:  # argv form: no such program (a shell would have said "not found")
        return f"could not start {command!r}: {err.strerror or err}", True
    assert proc.stdout is not None
    # Never the whole output in memory (it may be huge): its head and tail, which truncate() then keeps whole.
    output = lines.Collector(proc.stdout, MAX_OUTPUT // 2 - 200)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        return truncate(f"timed out after {timeout:g} s; the command was killed\n{output.text()}"), True
    except BaseException:
        # Ctrl-C reaches our process group, not the command's: stop it ourselves.
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        children.ended(proc.pid)
    return truncate(f"exit code {proc.returncode}\n{output.text()}"), proc.returncode != 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited on its own meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
