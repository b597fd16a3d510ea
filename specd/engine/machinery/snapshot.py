"""A fingerprint of specd's machinery with a copy of each small file, and the way back to it.

Each entry is read from ``lstat`` (links are never followed), and a file's bytes are read again only
when its stat moved. A file changed within the last moments is read again anyway at the check: a
second write inside the clock's granularity can leave the stat as it was (git's "racy clean").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import translate
from pathlib import Path

from specd.system.places import Place, key

MAX_COPY = 4 * 1024 * 1024  # one file's bytes kept to restore it; a bigger file is compared by digest only
MAX_KEPT = 32 * 1024 * 1024  # all copies together
MAX_ENTRIES = 2000  # per folder walked: a hooks folder holds a few dozen files, never a project
RACY_NS = 1_000_000_000


@dataclass(frozen=True)
class Entry:
    kind: str  # file | dir | link | other
    mode: int
    key: tuple[int, int, int, int]
    digest: str = ""  # files: sha256; links: their target
    data: bytes | None = None  # a file's bytes, when small enough to keep
    racy: bool = False

    def same(self, other: Entry | None) -> bool:
        if other is None or (self.kind, self.mode, self.digest) != (other.kind, other.mode, other.digest):
            return False
        return self.kind != "dir" or self.key[3] == other.key[3]  # a folder replaced by another one


Fingerprint = dict[Path, Entry]


@functools.lru_cache(maxsize=64)
def _pattern(names: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """One compiled pattern for a place's names (``fnmatch`` over each name, for each entry, at every take
    was a tenth of a step). POSIX ``fnmatch`` is case-sensitive, as ``translate``'s pattern is."""
    return re.compile("|".join(f"(?:{translate(name)})" for name in names) or "(?!)").match


class Reader:
    """Entries, reusing what an earlier read saw when the stat has not moved since."""

    def __init__(self) -> None:
        self.seen: dict[Path, Entry] = {}
        self.kept = 0
        # The same Path object for the same name at every take: its parsed parts and hash are kept with it, so a
        # folder that only grows (the sealed history) costs a stat per file, not a path parse and hash.
        self._paths: dict[str, Path] = {}
        # Settled files of the last take by name: (stat key and full mode, path, entry). A folder walk reuses one
        # from a single lstat, without the general path (a sealed history folder gains a file every 25 steps).
        self._files: dict[str, tuple[tuple[int, ...], Path, Entry]] = {}

    def take(self, places: list[Place], guards: list[Path]) -> Fingerprint:
        found: Fingerprint = {}
        self.kept = 0
        for path in guards:
            self._add(path, found)
        for place in places:
            if place.deep:
                self._walk(place.folder, found)
                continue
            with contextlib.suppress(OSError), os.scandir(place.folder) as listing:
                matches = _pattern(place.names)
                for item in listing:
                    if matches(item.name):
                        self._add(Path(item.path), found, item)
        self.seen = {p: e for p, e in found.items() if e.kind != "dir"}
        self.kept = sum(len(e.data or b"") for e in self.seen.values())
        self._files = {str(p): ((*e.key, stat.S_IFREG | e.mode), p, e) for p, e in self.seen.items()
                       if e.kind == "file" and not e.racy}
        return found

    def entry(self, path: Path, listed: os.DirEntry[str] | None = None) -> Entry | None:
        """The entry as it is now, read from the file unless its stat is unchanged and settled."""
        try:
            st = listed.stat(follow_symlinks=False) if listed is not None else path.lstat()
        except OSError:
            return None
        mode = stat.S_IMODE(st.st_mode)
        racy = time.time_ns() - st.st_ctime_ns < RACY_NS
        if stat.S_ISDIR(st.st_mode):
            return Entry("dir", mode, key(st))
        if stat.S_ISLNK(st.st_mode):
            return Entry("link", mode, key(st), str(path.readlink()))
        if not stat.S_ISREG(st.st_mode):
            return Entry("other", mode, key(st), f"mode {st.st_mode:o}")
        old = self.seen.get(path)
        if old is not None and old.key == key(st) and old.mode == mode and not old.racy:
            return old
        return self._read(path, st, mode, racy)

    def _read(self, path: Path, st: os.stat_result, mode: int, racy: bool) -> Entry:
        keep = st.st_size <= MAX_COPY and self.kept + st.st_size <= MAX_KEPT
        try:
            with path.open("rb") as handle:
                if keep:
                    data: bytes | None = handle.read()
                    digest = hashlib.sha256(data or b"").hexdigest()
                else:
                    data, digest = None, hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError as exc:
            return Entry("file", mode, key(st), f"unreadable:{exc.errno}", racy=True)
        if data is not None:
            self.kept += len(data)
        return Entry("file", mode, key(st), digest, data, racy)

    def _add(self, path: Path, found: Fingerprint, listed: os.DirEntry[str] | None = None) -> None:
        entry = self.entry(path, listed)
        if entry is not None:
            found[path] = entry

    def _walk(self, folder: Path, found: Fingerprint) -> None:
        self._add(folder, found)
        todo, count = [folder] if folder in found and found[folder].kind == "dir" else [], 0
        while todo and count < MAX_ENTRIES:
            with contextlib.suppress(OSError), os.scandir(todo.pop()) as listing:
                for item in listing:
                    count += 1
                    known = self._files.get(item.path)
                    if known is not None:
                        try:
                            st = item.stat(follow_symlinks=False)
                        except OSError:
                            continue  # gone since the listing: not in this fingerprint
                        if (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode) == known[0]:
                            found[known[1]] = known[2]  # as ``entry`` would find it: the same settled file
                            continue
                    path = self._paths.get(item.path) or self._path(item.path)
                    self._add(path, found, item)
                    if path in found and found[path].kind == "dir":
                        todo.append(path)


    def _path(self, name: str) -> Path:
        if len(self._paths) > 4 * MAX_ENTRIES:
            self._paths.clear()
        path = self._paths[name] = Path(name)
        return path


def differences(before: Fingerprint, after: Fingerprint) -> dict[Path, str]:
    """Each path that changed, and how."""
    changed: dict[Path, str] = {}
    for path in before.keys() | after.keys():
        old, new = before.get(path), after.get(path)
        if old is None:
            changed[path] = "created"
        elif new is None:
            changed[path] = "removed"
        elif not old.same(new):
            same_content = (old.kind, old.digest) == (new.kind, new.digest) and old.kind != "dir"
            changed[path] = "mode changed" if same_content else "changed"
    replaced = [p for p in changed if p in before and before[p].kind == "dir" and _replaced(before[p], after.get(p))]
    for folder in replaced:
        for path in before:  # a folder put back is a new, empty one: everything it held goes back too
            if folder in path.parents:
                changed.setdefault(path, "changed")
    return changed


def _replaced(old: Entry, new: Entry | None) -> bool:
    return new is None or new.kind != "dir" or new.key[3] != old.key[3]


def restore(before: Fingerprint, changed: dict[Path, str]) -> list[Path]:
    """Put each changed path back as ``before`` had it; returns the paths that could not be."""
    failed: list[Path] = []
    for path in sorted(p for p in changed if p not in before):  # new entries go first, shallowest first
        if not any(parent in changed and parent not in before for parent in path.parents):
            _remove(path, failed)
    for path in sorted(p for p in changed if p in before):  # a folder is back before the files in it
        old = before[path]
        try:
            _put_back(path, old)
        except OSError:
            failed.append(path)
    return failed


def _put_back(path: Path, old: Entry) -> None:
    if old.kind == "dir":
        if not path.is_dir() or path.is_symlink() or path.lstat().st_ino != old.key[3]:
            _clear(path)
            path.mkdir(mode=old.mode)
        path.chmod(old.mode)
        return
    if old.kind == "link":
        _clear(path)
        path.symlink_to(old.digest)
        return
    if old.kind != "file" or old.data is None:
        raise OSError(f"no copy of {path} was kept")
    tmp = path.with_name(f".specd-restore-{os.getpid()}-{path.name}")
    with tmp.open("wb") as handle:  # raw bytes: a restore must not pass through redaction
        handle.write(old.data)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.chmod(old.mode)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    os.replace(tmp, path)


def _remove(path: Path, failed: list[Path]) -> None:
    try:
        _clear(path)
    except OSError:
        failed.append(path)


def _clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
