"""Where the agent may touch the file system, and what its commands may see.

Every path is resolved (symlinks included) before it is checked, so a link
inside the project that points out of it, or at specd's own state, is refused
just like the plain path would be. The model sees the refusal as a tool error
and can correct itself; nothing is raised at the loop.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path


class Refused(Exception):
    """A tool call that the sandbox will not carry out; the message goes back to the model."""


# Names under .specd/ that belong to the engine: the agent corrupting them would
# corrupt the run it is part of.
_STATE_PATTERNS = (".pipeline-state.*", "events.jsonl", "*.lock", "heartbeat*")
_SECRET_ENV = re.compile(r"(^ANTHROPIC_API_KEY$|_API_KEY$|_TOKEN$|_SECRET$|PASSWORD|_CREDENTIALS$)", re.I)
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})  # noise, or refused anyway
# A pattern such as "pytest*" must not approve "pytest; rm -rf ~": commands
# that chain, redirect or substitute are never allowlisted, whatever they start
# with. Substitution runs even inside double quotes, so it is checked on the raw line.
_SUBSTITUTION = re.compile(r"`|\$\(|\n")


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, path: str) -> Path:
        """The absolute, symlink-free path for ``path``, or ``Refused``."""
        if not isinstance(path, str) or not path.strip():
            raise Refused("a non-empty path is required")
        raw = Path(path)
        candidate = raw if raw.is_absolute() else self.root / raw
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self.root):
            raise Refused(f"{path}: outside the project root {self.root}; only paths inside it are allowed")
        self.check_protected(resolved, shown=path)
        return resolved

    def check_protected(self, resolved: Path, *, shown: str) -> None:
        parts = resolved.relative_to(self.root).parts
        if ".git" in parts:
            raise Refused(f"{shown}: .git/ is off limits; use run_command with git if the workflow allows it")
        if not parts or parts[0] != ".specd":
            return
        if "transcripts" in parts or any(fnmatch.fnmatch(parts[-1], p) for p in _STATE_PATTERNS):
            raise Refused(f"{shown}: this is specd's own run state; it is managed by specd, not the agent")

    def allowed(self, resolved: Path) -> bool:
        try:
            self.check_protected(resolved, shown=str(resolved))
        except Refused:
            return False
        return True

    def relative(self, resolved: Path) -> str:
        return resolved.relative_to(self.root).as_posix() or "."

    def walk(self, base: Path, pattern: str) -> Iterable[Path]:
        """Files under ``base`` matching a glob, sorted, never leaving the sandbox."""
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise Refused(f"{pattern}: glob patterns must be relative and may not contain '..'")
        for found in sorted(base.glob(pattern)):
            if _SKIP_DIRS.intersection(found.relative_to(self.root).parts):
                continue
            resolved = found.resolve()
            if resolved.is_relative_to(self.root) and self.allowed(resolved) and found.is_file():
                yield found


def command_allowed(command: str, patterns: Iterable[str]) -> bool:
    line = command.strip()
    if _SUBSTITUTION.search(line) or _chains(line):
        return False
    return any(fnmatch.fnmatchcase(line, pattern) for pattern in patterns)


def _chains(line: str) -> bool:
    """True if the line has a shell operator outside quotes (or cannot be parsed)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    try:
        return any(token and set(token) <= set("();<>|&") for token in lexer)
    except ValueError:
        return True


def command_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for agent commands: the user's, without credentials."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not _SECRET_ENV.search(name)}
