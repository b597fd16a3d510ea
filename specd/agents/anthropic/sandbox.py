"""Where the agent's file tools may read and write.

Every path is resolved (symlinks included) before it is checked, so a link
inside the project that points out of it, or at specd's own machinery, is
refused just like the plain path would be. Reading specd's config and state is
allowed (the agent may need to know the pipeline); writing it is not: a
rewritten pipeline file or hook would run the agent's code on the next
`specd continue`. The project's secret files (``.env*``, ``.npmrc``, private
keys...: see ``specd.system.envfiles``) are refused both ways, as the jail shows
them empty to every other backend. Files with more than one hard link are
refused both ways, since the other link may live outside the project. The model
sees every refusal as a tool error and can correct itself; nothing is raised at
the loop.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from specd.system import environments
from specd.system.envfiles import is_hidden
from specd.system.machinery import is_state, machinery
from specd.system.ownfiles import read_capped


class Refused(Exception):
    """A tool call that the sandbox will not carry out; the message goes back to the model."""


_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})  # noise, and .git is not for listing
READ_LIMIT = 32 << 20  # bytes read_file and edit_file take from one file
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not hang us
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
__all__ = ["Refused", "Sandbox", "is_state", "machinery"]  # machinery: specd.system.machinery, the one list


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The absolute, symlink-free path for ``path``, or ``Refused``."""
        if not isinstance(path, str) or not path.strip():
            raise Refused("a non-empty path is required")
        raw = Path(path)
        candidate = raw if raw.is_absolute() else self.root / raw
        try:
            resolved = candidate.resolve()
        except RuntimeError:  # Python 3.11 reports a symlink loop this way
            raise Refused(f"{path}: a symlink loop; it points back at itself") from None
        except OSError as err:
            raise Refused(f"{path}: cannot be resolved ({os.strerror(err.errno or errno.EINVAL)})") from None
        if not resolved.is_relative_to(self.root):
            raise Refused(f"{path}: outside the project root {self.root}; only paths inside it are allowed")
        if write and (reason := machinery(resolved.relative_to(self.root).parts)):
            raise Refused(f"{path}: writing refused: {reason}")
        if write and (env := environments.holding(self.root, resolved)) is not None:
            raise Refused(f"{path}: writing refused: it is inside {env.relative_to(self.root)}, an environment of "
                          f"the project's; {environments.WHY}")
        if is_hidden(self.root, resolved):  # what the model reads goes to the API as it is
            raise Refused(f"{path}: holds the project's keys; .env files, credential files and private keys are "
                          "never shown to the model (a template such as .env.example is)")
        return resolved

    def read_text(self, path: str) -> str:
        resolved = self.resolve(path)
        fd = os.open(resolved, _READ_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            self._check_file(handle.fileno(), path)
            # a 10 GB file made by a command is not read into memory whole
            data = read_capped(handle, os.fstat(handle.fileno()).st_size, READ_LIMIT)
        if len(data) > READ_LIMIT:
            raise Refused(f"{path}: larger than {READ_LIMIT >> 20} MB; read a part of it with run_command "
                          "(head, sed -n, grep)")
        return data.decode("utf-8", errors="replace")

    def write_text(self, path: str, text: str) -> Path:
        resolved = self.resolve(path, write=True)
        resolved.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(resolved, _WRITE_FLAGS, 0o644)
        with os.fdopen(fd, "wb") as handle:
            # Checked on the open file, so a link swapped in after resolve() is still caught.
            self._check_file(handle.fileno(), path)
            handle.truncate(0)
            handle.write(text.encode("utf-8"))
        return resolved

    def _check_file(self, fd: int, shown: str) -> None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{shown}: not a regular file")
        if info.st_nlink > 1:
            raise Refused(f"{shown}: has {info.st_nlink} hard links, and another may be outside the project; "
                          "hard-linked files are refused")

    def relative(self, resolved: Path) -> str:
        return resolved.relative_to(self.root).as_posix() or "."

    def walk(self, base: Path, pattern: str) -> Iterable[Path]:
        """Readable files under ``base`` matching a glob, sorted, never leaving the sandbox."""
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise Refused(f"{pattern}: glob patterns must be relative and may not contain '..'")
        for found in sorted(base.glob(pattern)):
            parts = found.relative_to(self.root).parts
            if _SKIP_DIRS.intersection(parts) or is_state(parts):
                continue
            try:
                resolved = found.resolve()
                info = found.stat()
            except (OSError, RuntimeError):
                continue  # a loop or a dangling link: nothing to read
            inside = resolved.is_relative_to(self.root) and not is_state(resolved.relative_to(self.root).parts)
            if inside and stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and not is_hidden(self.root, resolved):
                yield found
