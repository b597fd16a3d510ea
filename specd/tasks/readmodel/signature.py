"""Which task folders exist, and the signature that says a folder's status row is still what it was.

The folder's change time moves whenever an entry in it is made, removed or renamed (every atomic save of
specd renames), so the watched names that do not exist need no look: making one moves it. A file edited in
place moves only its own time, so each watched file that exists is looked at too: three `stat`s for a
finished task (the folder, config.json, the run state) where six were taken before. Change time, not
modification time: nothing can set it back (`touch -d`, `cp -p` and tar set the other).

A signature is ``[digest, names]``: ``names`` says which watched files exist (a bit each), and ``digest`` is
the hash of the tuple of (change time in ns, size, inode) of the folder and of each of those files, in
order. Python hashes ints and tuples the same way in every process (only str and bytes are salted), and
the tuple hash is a bijection in each element with the others fixed, so a change of any one value always
changes it; the index is keyed by the Python version too. One int instead of twelve keeps the index small.

That shallow signature covers every file a finished row reads. An unfinished row reads more: where specdacular's
files put a task not run yet (RESEARCH.md, CONTEXT.md, a phase folder's PLAN.md) and the phase folders a plan
walks, any of which can be edited in place or gain a file one folder down. Its signature is deep (the ``DEEP``
bit set): the same hash over every folder and file of the task's tree, transcripts left out (only a live run
writes them, and a live run's row is never kept). It is taken only for a row the fast path of a finished task
did not give, before that row is built.
"""

from __future__ import annotations

# os.stat on strings throughout: 30,000 calls at 10,000 tasks, where a Path object each costs as much again.
# ruff: noqa: PTH116, PTH208
import functools
import os
import stat
from array import array
from typing import TYPE_CHECKING, Any

from specd.tasks.readmodel.inputs import tree

if TYPE_CHECKING:
    from specd.tasks.project import Project

# ``phases.PHASE_FOLDERS`` written out (a test keeps them equal): a printed listing is checked against these
# signatures, and importing that module (pathlib, dataclasses, markdown) cost the check 6 ms of a 60 ms start.
PHASE_FOLDERS = ("phases", "plans")

# Every file a finished row reads (the lock's owner file: a run may be live), and the phase folders, whose
# own time moves when a phase folder is added or removed in them.
WATCHED = ("config.json", ".pipeline-state.json", "ROADMAP.md", ".run.lock.owner", *PHASE_FOLDERS)
CONFIG = 1  # the bit of config.json: a task folder has one
DEEP = 1 << 20  # a signature over the whole tree (an unfinished row), not the watched names
PREFETCH = 1_000  # folders from which a cold disk is worth reading with threads (``prefetch``)
MIN_FORK = 4_000  # folders worth a forked copy's help to look at (a fork costs a few ms)
GONE = (-1, -1, -1)  # a name that exists but cannot be looked at (a dangling link): looked at every time

# folder, signature, newest change time (0 when taken from the index), whether the folder is a link
Found = tuple[str, list[int], int, bool]


def marks(folder: str) -> tuple[list[int], int] | None:
    """The folder's signature and its newest change time (ns), or None when it is not a task (no regular
    config.json)."""
    try:
        st = os.stat(folder)  # first: a name made after the listing below moves this time, seen next time
        names = set(os.listdir(folder))  # one call says which of the six exist: no look at the missing ones
    except OSError:
        return None
    values = [st.st_ctime_ns, st.st_size, st.st_ino]
    bits = 0
    for i, name in enumerate(WATCHED):
        if name not in names:
            continue
        bits |= 1 << i
        try:
            st = os.stat(f"{folder}/{name}")
        except OSError:
            if i == 0:
                return None
            values += GONE
            continue
        if i == 0 and not stat.S_ISREG(st.st_mode):
            return None
        values += (st.st_ctime_ns, st.st_size, st.st_ino)
    if not bits & CONFIG:
        return None
    return [hash(tuple(values)), bits], max(values[0::3])


def deep(folder: str) -> tuple[list[int], int] | None:
    """The folder's deep signature and its tree's newest change time, or None when the tree cannot be watched
    whole (too big, a linked folder in it, unreadable)."""
    paths: list[str] = []
    if not tree(folder, paths):
        return None
    values = [len(paths)]
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            values += GONE
        else:
            values += (st.st_ctime_ns, st.st_size, st.st_ino)
    return [hash(tuple(values)), DEEP | CONFIG], max(values[1::3])


def still(folder: str, sig: Any, at: int | None = None, name: str = "") -> bool:
    """Whether ``sig`` (read from the index: maybe anything) is the folder's signature now. ``at``: an open
    descriptor of the folder's parent, where it is ``name``: each look then walks two names, not the whole path
    (a third of the cost of a `stat` here)."""
    try:
        digest, bits = sig
        if type(bits) is int and bits & DEEP:
            now = deep(folder)
            return now is not None and now[0] == [digest, bits]
        if at is None:
            name = folder
        st = os.stat(name, dir_fd=at)
        values = [st.st_ctime_ns, st.st_size, st.st_ino]
        for watched in names(bits):
            try:
                st = os.stat(f"{name}/{watched}", dir_fd=at)
            except OSError:
                values += GONE
            else:
                values += (st.st_ctime_ns, st.st_size, st.st_ino)
        return bool(bits & CONFIG) and hash(tuple(values)) == digest
    except (OSError, TypeError, ValueError):
        return False


def pack(kept: list[tuple[str, list[int]]], root: str) -> bytes | None:
    """``kept`` (each row's folder and signature) as a listing decodes it in a millisecond, where a JSON list of
    30,000 pairs took 15-25 ms: the folders (relative to ``root`` where they are in it) joined by NUL, which no
    path holds, then every signature's two ints as 64-bit machine ints. None when a signature is not two ints."""
    prefix = root.rstrip("/") + "/"
    names = "\0".join(folder.removeprefix(prefix) for folder, _ in kept).encode("utf-8", "surrogateescape")
    try:
        numbers = array("q", [number for _, sig in kept for number in sig])
    except (TypeError, OverflowError):
        return None
    if len(numbers) != 2 * len(kept):
        return None
    return len(names).to_bytes(8, "little") + names + numbers.tobytes()


def unpack(blob: Any) -> tuple[list[str], array[int]] | None:
    """``pack``'s folders (relative to its root where they were in it) and signatures' ints, or None for anything
    it did not write."""
    if type(blob) is not bytes or len(blob) < 8:
        return None
    size = int.from_bytes(blob[:8], "little")
    numbers: array[int] = array("q")
    rest = blob[8 + size:]
    if len(blob) < 8 + size or len(rest) % numbers.itemsize:
        return None
    names = blob[8:8 + size].decode("utf-8", "surrogateescape").split("\0") if size else []
    numbers.frombytes(rest)
    return (names, numbers) if len(numbers) == 2 * len(names) else None


def all_still(blob: Any, root: str) -> bool:
    """Whether every folder and signature ``pack`` kept in ``blob`` (read from the store: maybe anything) holds
    now; the looks of thousands of folders are shared with a forked copy on two cores (``fanout``)."""
    found = unpack(blob)
    if found is None:
        return False
    names, numbers = found
    look = functools.partial(_all_still, names, numbers, root.rstrip("/") + "/")
    if len(names) < MIN_FORK:
        return look((0, len(names)))
    from specd.system import fanout

    half = len(names) // 2
    return all(fanout.fork_map(look, [(0, half), (half, len(names))], min_items=2))


def _all_still(names: list[str], numbers: array[int], prefix: str, span: tuple[int, int]) -> bool:
    """``all_still`` over ``names[span]``, each looked at from its parent's descriptor (a folder's whole path is
    made only for a deep look, or where the parent cannot be opened)."""
    parents: dict[str, int | None] = {}
    try:
        for i in range(*span):
            relative = names[i]
            parent, _, name = relative.rpartition("/")
            at = _parent(parents, parent, prefix)
            sig = [numbers[2 * i], numbers[2 * i + 1]]
            if sig[1] & DEEP or at is None:
                whole = relative if relative.startswith("/") else prefix + relative
                if not still(whole, sig):
                    return False
            elif not still("", sig, at, name):
                return False
    finally:
        _close(parents)
    return True


def _parent(parents: dict[str, int | None], parent: str, prefix: str = "") -> int | None:
    """An open descriptor of ``parent`` (under ``prefix`` unless absolute), opened once (None when it cannot be:
    a look then takes the whole path)."""
    if parent not in parents:
        path = parent if parent.startswith("/") or not prefix else prefix + parent
        try:
            parents[parent] = os.open(path or "/", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            parents[parent] = None
    return parents[parent]


def _close(parents: dict[str, int | None]) -> None:
    for at in parents.values():
        if at is not None:
            os.close(at)


@functools.lru_cache(maxsize=256)
def names(bits: int) -> tuple[str, ...]:
    """The watched names a signature's bits say exist (raises TypeError for what is not a small int)."""
    if type(bits) is not int or not 0 <= bits & ~DEEP < 1 << len(WATCHED):
        raise TypeError(bits)
    return tuple(name for i, name in enumerate(WATCHED) if bits >> i & 1)


def task_folders(project: Project, index: dict[str, Any] | None = None) -> dict[str, list[Found]]:
    """Each task name, with the folders holding it (two: the same name in tasks/ and features/). A task is a
    folder with a config.json file, as everywhere else. A folder whose ``index`` entry's signature still
    holds is taken as it is. Thousands of folders are looked at on two cores (``fanout``)."""
    from specd.system import fanout

    folders: list[tuple[str, str, bool]] = []
    for root in (project.tasks_dir, project.features_dir):
        try:
            entries = os.scandir(root)
        except OSError:
            continue
        with entries:  # the entry knows a link without another look
            folders += [(entry.name, entry.path, entry.is_symlink()) for entry in entries if entry.is_dir()]

    if len(folders) >= PREFETCH:
        from specd.system import prefetch

        prefetch.warm([path for _, path, _ in folders], WATCHED[:2])  # only when the disk is what we wait for
    parents: dict[str, int | None] = {}
    for _, path, _ in folders:
        _parent(parents, path.rpartition("/")[0])  # opened before the fork: both copies look from them

    def look(folder: tuple[str, str, bool]) -> Found | None:
        name, path, linked = folder
        kept = index.get(path) if index else None
        if type(kept) is list and len(kept) == 2 and still(path, kept[0], parents[path.rpartition("/")[0]], name):
            return (path, kept[0], 0, False)
        got = marks(path)
        return None if got is None else (path, *got, linked)

    found: dict[str, list[Found]] = {}
    try:
        seen_all = fanout.fork_map(look, folders)
    finally:
        _close(parents)
    for (name, _, _), seen in zip(folders, seen_all, strict=True):
        if seen is not None:
            found.setdefault(name, []).append(seen)
    return found
