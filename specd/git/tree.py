"""The work tree as git sees it: which paths are dirty, and what each one holds right now.

A snapshot maps every dirty path (modified, deleted, staged or untracked; ignored files are not
listed) to its porcelain status and a hash of its content. Two snapshots tell which paths changed
in between, by content: a path that stays dirty with the same content did not change, however
its index status moved.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from specd.git.repo import Repo
from specd.state import atomic
from specd.system.envfiles import never_added

GONE = ""  # the digest of a path that no longer exists
SETTLED_NS = 3_000_000_000
# Only a file this big is worth remembering: a small one costs about what its stat does, and remembering
# each of a step's 200,000 new files held 80 MB.
REMEMBERED = 64 * 1024
# A file smaller than this is read in one go: hashlib.file_digest allocates a 256 KiB buffer per file, which
# made hashing many small files five times slower.
WHOLE = 1024 * 1024
# A file bigger than this is never committed by specd: GitHub refuses a push that holds one (its limit is 100 MB).
BIG_FILE = 100 * 1024 * 1024


@dataclass(frozen=True, slots=True)  # slots: a snapshot may hold hundreds of thousands
class Entry:
    status: str  # porcelain XY: "??" untracked, " M" modified, "D " staged deletion, ...
    digest: str

    @property
    def tracked(self) -> bool:
        return self.status != "??"


Snapshot = dict[str, Entry]


class Hasher:
    """Content hashes, read again only when a big file's stat moved: a big untracked file is hashed once a run.

    A file changed within the last seconds is always read: a second write inside the filesystem's
    timestamp granularity could otherwise keep the same stat (git's "racy clean" problem).
    """

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int, int, int], str]] = {}

    def __call__(self, path: Path) -> str:
        try:
            st = path.lstat()
        except FileNotFoundError:
            return GONE
        except OSError as exc:
            return f"unreadable:{exc.errno}"
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        seen = self._seen.get(path)
        if seen is not None and seen[0] == key:
            return seen[1]
        value = digest(path, st)
        if st.st_size >= REMEMBERED and time.time_ns() - st.st_ctime_ns > SETTLED_NS:
            self._seen[path] = (key, value)
        return value


def take(repo: Repo, scope: str, hasher: Callable[[Path], str] | None = None,
         ignored: list[str] | None = None) -> Snapshot:
    """The dirty paths under ``scope`` (a folder relative to the top; "." for all). ``ignored``, when given,
    gets the paths git ignores there from the same walk: a folder ignored whole once, ending in "/", unwalked."""
    # -z: raw names, no quoting; --no-renames: one name per record; -uall: untracked files one by one.
    out = repo.run("status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all",
                   "--ignore-submodules=all", *(["--ignored=matching"] if ignored is not None else []), "--", scope)
    hash_of = hasher or digest
    records = [record for record in out.split("\0") if record]
    if ignored is not None:
        ignored += [record[3:] for record in records if record.startswith("!!")]
    # sys.intern: one string per status, not one per path
    return {record[3:]: Entry(sys.intern(record[:2]), hash_of(repo.top / record[3:]))
            for record in records if not record.startswith("!!")}


def save(snapshot: Snapshot, path: Path) -> None:
    # Atomic, not fsynced: it must survive a kill of specd (the page cache does); after a power cut the
    # worst is that an interrupted step's changes are reported as uncommitted instead of committed.
    atomic.write_json(path, {p: [e.status, e.digest] for p, e in snapshot.items()}, durable=False)


def load(path: Path) -> Snapshot | None:
    """A snapshot saved by ``save``; None when there is none (or it is unreadable: then it is no help)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(p): Entry(str(v[0]), str(v[1])) for p, v in dict(data).items()}
    except (OSError, ValueError, RecursionError, TypeError, IndexError, KeyError):
        return None


def changed(before: Snapshot, after: Snapshot) -> set[str]:
    """Paths whose content differs between the snapshots (a clean path counts as unchanged content)."""
    return {path for path in before.keys() | after.keys() if _content(before, path) != _content(after, path)}


def committable(top: Path, path: str, after: Snapshot) -> bool:
    """Whether ``git add`` can take the path: it exists, or git tracks it (then its deletion is staged).

    A nested repository ("sub/") is never taken: adding it would record a bare gitlink.
    """
    entry = after.get(path)
    if path.endswith("/"):
        return False
    if entry is None:  # clean now: tracked and unchanged, or an untracked file that went away
        return (top / path).is_symlink() or (top / path).exists()
    return entry.tracked or entry.digest != GONE


def is_secret(path: str) -> bool:
    """Whether a path's name looks like a secret file's: specd never adds one that git does not track."""
    return never_added(path.rstrip("/").rpartition("/")[2])


def untracked_secret(path: str, after: Snapshot) -> bool:
    entry = after.get(path)
    return is_secret(path) and entry is not None and not entry.tracked


def inside(path: str, folder: str) -> bool:
    return folder in (".", "") or path == folder or path.startswith(folder.rstrip("/") + "/")


def digest(path: Path, st: os.stat_result | None = None) -> str:
    """``st``: the path's lstat, when the caller has it (a step may leave 200,000 files to hash)."""
    try:
        st = path.lstat() if st is None else st
        if stat.S_ISLNK(st.st_mode):
            return "link:" + str(path.readlink())
        if stat.S_ISDIR(st.st_mode):
            return "dir"  # a nested repository: its content is its own business
        if not stat.S_ISREG(st.st_mode):
            return special(st)
        if st.st_size > BIG_FILE:  # never committed: its stat tells a change (a write moves the change time), and a
            return big(st)  # 3 GB dump took 7 s to hash at every run's first look
        # Never through a link, and never waiting: a FIFO swapped in since the lstat would block specd's open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb", buffering=0) as handle:
            if not stat.S_ISREG((now := os.fstat(fd)).st_mode):
                return special(now)
            if st.st_size < WHOLE:  # read to the end, in case it grew since the stat
                return hashlib.sha1(handle.readall()).hexdigest()
            return hashlib.file_digest(handle, "sha1").hexdigest()
    except FileNotFoundError:
        return GONE
    except OSError as exc:  # unreadable: still a state, so a later readable version counts as a change
        return f"unreadable:{exc.errno}"


def big(st: os.stat_result) -> str:
    """The digest of a file over ``BIG_FILE``: what it is by its stat, which nothing sets back (its change time)."""
    return f"big:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def special(st: os.stat_result) -> str:
    """The digest of what is neither file, link nor folder: a FIFO or a socket an agent made (``mkfifo app.py``
    over a tracked file), never opened, since reading a FIFO waits for a writer that never comes."""
    return f"special:{stat.S_IFMT(st.st_mode):o}"


def unfit(top: Path, path: str) -> str | None:
    """Why git must not be given the path whatever the step meant (a kind of ``barrier.WITHHELD``), from one
    lstat: "special" (a FIFO or a socket), "link" (out of the work tree: ``.venv -> /home/me/.ssh`` leads nowhere
    in another clone and names a place here), "big" (over ``BIG_FILE``); None for a path git may take."""
    try:
        st = (top / path).lstat()
    except OSError:  # gone: its deletion is what a commit takes
        return None
    if stat.S_ISLNK(st.st_mode):
        target = Path(os.path.normpath(top / Path(path).parent / (top / path).readlink()))
        return None if target.is_relative_to(top) else "link"
    if stat.S_ISREG(st.st_mode):
        return "big" if st.st_size > BIG_FILE else None
    return None if stat.S_ISDIR(st.st_mode) else "special"


def _content(snapshot: Snapshot, path: str) -> str | None:
    entry = snapshot.get(path)
    return None if entry is None else entry.digest
