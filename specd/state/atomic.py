"""Crash-safe writes: temp file in the same folder → fsync → os.replace → fsync the folder.

After a power cut or SIGKILL the file is either the old version or the new
one, never a torn mix, because rename within a folder is atomic on POSIX.
Every byte passes through ``redact`` first: these files are committed and shared.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from specd.redact import redact, redact_obj
from specd.state.text import clean
from specd.system.ownfiles import open_own


def write_text(path: Path, text: str, *, sync_dir: bool = True, durable: bool = True, checked: bool = False,
               ) -> None:
    """``sync_dir=False`` skips the folder's fsync: the new content is durable, but after a power cut the
    rename may be undone, leaving the previous version. For saves that a later durable save always follows.
    ``durable=False`` skips both fsyncs: still atomic (whole old or whole new, a kill -9 included), for files
    whose content means nothing after a power cut (who holds a lock, which processes run, open steps).
    ``checked``: the caller has shown that redaction changes nothing in ``text`` (``readmodel.redaction.suspect``:
    a pass over megabytes of the status index costs more than the check)."""
    text = text if checked else clean(redact(text))  # a lone surrogate cannot be written as UTF-8 (text.py)
    try:
        _replace(path, text, sync_dir and durable, durable)
    except OSError as exc:
        # Name the file the user knows, not our scratch file (or nothing, after a failed write on a descriptor).
        exc.filename = str(path)
        raise


def _replace(path: Path, text: str, sync_dir: bool = True, durable: bool = True) -> None:
    import tempfile  # here, not at the top: read-only commands never write

    make_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
    try:
        Path(tmp).chmod(_mode(path))  # mkstemp makes 0600; the user's files should look like any other
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # on a read-only disk even this fails; the next run sweeps it
            Path(tmp).unlink(missing_ok=True)
        raise
    if sync_dir:
        _fsync_dir(path.parent)


def make_folder(folder: Path) -> None:
    """``mkdir -p``; a ``.specd/.cache/`` it makes gets a ``.gitignore`` of its own that ignores everything, so
    the cache never shows in `git status`, whoever made ``.specd/`` (a specdacular project has no specd
    ``.gitignore`` there)."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for place in (folder, *folder.parents):
        if place.name == ".cache" and place.parent.name == ".specd":
            ignore = place / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# made by specd: its caches are never committed\n*\n", encoding="utf-8")
            return


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_json(path: Path, data: Any, *, sync_dir: bool = True, flat: bool = False, durable: bool = True,
               ) -> None:
    """``flat``: one top-level key per line with its value on that line, for a file rewritten on every step:
    ``indent`` makes json fall back from its C encoder to pure Python, ten times slower on a long cursor."""
    # Redacted as data first: a secret holding a quote or non-ASCII is escaped in
    # the JSON text, where a plain text match could no longer find it.
    clean = redact_obj(data)
    if flat and isinstance(clean, dict):
        write_flat(path, {str(k): json.dumps(v, default=str) for k, v in clean.items()}, sync_dir=sync_dir,
                   durable=durable)
        return
    text = json.dumps(clean, indent=2, sort_keys=False, default=str) + "\n"
    write_text(path, text, sync_dir=sync_dir, durable=durable)


def write_flat(path: Path, fields: dict[str, str], *, sync_dir: bool = True, durable: bool = True) -> None:
    """A JSON object from its fields' JSON texts (already redacted as data: ``state/redacting.py``), one key
    per line; the whole text still passes ``redact`` in ``write_text``."""
    text = "{\n" + ",\n".join(f"  {json.dumps(k)}: {v}" for k, v in fields.items()) + "\n}\n"
    write_text(path, text, sync_dir=sync_dir, durable=durable)


def append_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Append ``text`` (redacted) in one write, fsynced unless not ``durable``; a crash can tear only the last
    line."""
    data = clean(redact(text)).encode("utf-8")
    make_folder(path.parent)
    fd = open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # a link an agent left there is not written through
    try:
        os.write(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some filesystems do not allow opening folders; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
