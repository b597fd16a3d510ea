"""Files the agent could have made, read and written by specd outside the jail without following a link.

Inside the jail an agent cannot see the user's HOME, but it can make a link to any path in it: in the task's
folder, in its backend's state folder. specd reads and writes some of those files outside the jail, as the user:
a link there would read the user's files into the run (and on to the model), or write over them. So here the
last part of a path is opened with ``O_NOFOLLOW`` and must be a regular file (a FIFO would hang specd), and a
write replaces a link (and a linked folder on the way) instead of going through it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# How many folders deep specd walks a tree the agent writes: no document or source a person wrote lies deeper, and
# a nesting of a thousand folders (a loop of mkdir and chdir) would exhaust a recursive walk's stack.
DEEPEST = 64


class NotOwnFile(OSError):
    """A link, a FIFO or anything else but a regular file, or one larger than the limit."""


def read_regular(path: Path, limit: int, *, follow: bool = False, head: bool = False) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes, never through a link at its end unless
    ``follow`` (a linked ``.env`` is common; a FIFO or a device is still refused: it would hang specd).
    ``head``: a bigger file gives its first ``limit`` bytes instead of being refused."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and path.is_symlink():
            raise NotOwnFile(f"{path.name} is a link; specd reads only a file written there") from exc
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotOwnFile(f"{path.name} is not a regular file")
        data = read_capped(handle, info.st_size, limit)
    if head:
        return data[:limit]
    if len(data) > limit:
        raise NotOwnFile(f"{path.name} is larger than {limit} bytes")
    return data


def read_capped(handle: BinaryIO, size: int, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of an open file whose size was ``size``. read() sizes its buffer by what it is
    asked for, so it is asked for what is there; a file that grew meanwhile is read on in pieces."""
    data = handle.read(min(size, limit) + 1)
    while len(data) <= limit and (more := handle.read(min(1 << 20, limit + 1 - len(data)))):
        data += more
    return data


def open_own(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of the regular file at ``path`` for writing; a link, FIFO or device in its place is removed
    and the file made anew (written through, it would change a file of the user's, or hang specd)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EWOULDBLOCK):
            raise
    else:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
    path.unlink()
    return os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def own_folder(folder: Path) -> Path:
    """``folder`` as a real folder: a link (or a file) in its place is removed first, never followed."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def copy_into(source: Path, target: Path) -> None:
    """Every file under ``source`` into ``target``, which the agent may have written: each file is replaced
    whole (a link there is replaced, not written through), and a linked folder on the way is made a real one."""
    import shutil  # here: the module's readers and writers are on every command's path, this only on Codex's
    import tempfile

    for here, dirs, files in os.walk(source):
        inside = target / Path(here).relative_to(source)
        own_folder(inside)
        dirs[:] = [name for name in dirs if not (Path(here) / name).is_symlink()]
        for name in files:
            fd, scratch = tempfile.mkstemp(dir=inside, prefix=".tmp-")
            os.close(fd)
            try:
                shutil.copyfile(Path(here) / name, scratch)
                os.replace(scratch, inside / name)
            except BaseException:
                Path(scratch).unlink(missing_ok=True)
                raise


def walk(top: str | Path, deepest: int = DEEPEST) -> Iterator[tuple[str, list[str], list[str]]]:
    """As ``os.walk`` top down (a linked folder listed, not entered; ``dirs`` may be pruned), but with a stack of
    its own instead of recursion, and never more than ``deepest`` folders below ``top``."""
    todo = [(os.fspath(top), 0)]
    while todo:
        folder, depth = todo.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield folder, dirs, files
        if depth < deepest:
            todo.extend((f"{folder}/{name}", depth + 1) for name in reversed(dirs) if name not in links)
