"""The secret files a repository's history holds: every version of each one a commit added or changed.

The jail shows each secret file of the work tree empty (``specd.system.envfiles``), but `.git` is the agent's to
read, and `git log -p` shows every version of a ``.env`` committed by mistake and deleted the day after. So a run
searches the history as it starts: every path any commit of any ref added or changed whose name is a secret
file's (a ``.pem``, ``.key`` or ``id_*`` only when that version holds a private key). The first search of a
very long history stops after ``LIMIT`` seconds, and says so; later ones look only at the commits made since the
refs it saw, which are kept in ``.git/specd-past-secrets.json`` (paths and commits, never a value). What it
finds is named on the run's first lines, and the values of those versions are masked and kept out of commits as
the values of the files in the tree are (``specd.tasks.secrets``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import NamedTuple

from specd.redact import scrubbed_env
from specd.state import atomic
from specd.system import envfiles
from specd.system.findfiles import GIT, in_repository

LIMIT = 5.0  # seconds the search of a history may take (the Linux kernel's takes minutes)
MAX_BYTES = 1 << 20  # a version bigger than this is no settings file
FRESH = 60.0  # seconds a search stays good within one process (a worker lives for days)
CACHE = "specd-past-secrets.json"


class Version(NamedTuple):
    commit: str
    path: str  # from the repository's top
    text: str


class Past(NamedTuple):
    versions: tuple[Version, ...]
    complete: bool  # False: the search stopped at LIMIT, and older commits were not searched


_memo: dict[str, tuple[float, Past]] = {}


def search(root: Path) -> Past:
    """The versions of secret files in the history of the repository ``root`` is in (none outside one)."""
    kept = _memo.get(str(root))
    if kept is not None and time.monotonic() - kept[0] < FRESH:
        return kept[1]
    asked = _git(root, "rev-parse", "--git-common-dir", "--all") if in_repository(root) else None
    if asked is None or not asked.strip():
        return Past((), True)
    common, *tips = os.fsdecode(asked).splitlines()
    # In git's folder, shared by worktrees, and read-only to every jail: an agent cannot say it was searched.
    cache = (root / common) / CACHE
    seen, complete, found = _read(cache)
    now = sorted(set(tips))
    if now == seen:
        past = Past(tuple(_versions(root, found) or ()), complete)
    else:
        more = _log(root, seen)
        if more is None and seen and (again := _log(root, [])) is not None:
            more, found, complete = again, [], True  # a ref seen before is gone for good (deleted, then gc)
        if more is None:  # git failed: what was found before stands, and the next search asks again
            return Past(tuple(_versions(root, found) or ()), complete)
        # Each new version is looked at once: only a secret file's is kept (an `id_map.py` is code).
        versions = _versions(root, list(dict.fromkeys([*more[0], *found])))
        if versions is None:  # git could not show them: nothing is kept, the next search looks again
            return Past(tuple(_versions(root, found) or ()), complete)
        past = Past(tuple(versions), complete and more[1])
        record = {"tips": now, "complete": past.complete, "found": [(v.commit, v.path) for v in past.versions]}
        with contextlib.suppress(OSError):  # a cache: not durable; a read-only repository searches every time
            atomic.write_json(cache, record, durable=False)
    _memo[str(root)] = (time.monotonic(), past)
    return past


def _read(cache: Path) -> tuple[list[str], bool, list[tuple[str, str]]]:
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        return (sorted(map(str, data["tips"])), bool(data["complete"]),
                [(str(commit), str(path)) for commit, path in data["found"]])
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return [], True, []


def _log(root: Path, seen: list[str]) -> tuple[list[tuple[str, str]], bool] | None:
    """(commit, path) of each secret-named file a commit not reachable from ``seen`` added or changed, newest
    first, and whether git got through them all within ``LIMIT``; None when git failed. Read as git writes it
    (a long history's names run to megabytes), and filtered here: a pathspec of the names makes git slower."""
    # (--ignore-missing does not cover --stdin in git 2.39: a ref seen before that is gone makes git fail)
    args = ["log", "--all", "--stdin", "--format=%x01%H", "-z", "--name-only",
            "--diff-filter=AM", "--no-renames"]
    try:
        # unbuffered: each read takes what git wrote so far
        proc = subprocess.Popen([*GIT, *args], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=_env(), bufsize=0)
    except OSError:
        return None
    try:
        assert proc.stdin is not None
        with proc.stdin:  # the refs seen, on its input: a repository may have thousands of tags
            proc.stdin.write("".join(f"^{tip}\n" for tip in seen).encode())
    except OSError:  # git is gone already: its exit says why
        pass
    cut = threading.Event()

    def stop() -> None:
        cut.set()
        proc.kill()

    timer = threading.Timer(LIMIT, stop)
    timer.start()
    found: list[tuple[str, str]] = []
    rest = b""
    try:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 16):
            *records, rest = (rest + chunk).split(b"\x01")
            found += _named(records)
    finally:
        timer.cancel()
        proc.kill()  # interrupted: nothing is left running (a no-op once git is done)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    if cut.is_set():
        return found, False  # the last record, which the limit may have cut, is left out
    return (found + _named([rest]), True) if proc.returncode == 0 else None


def _named(records: list[bytes]) -> list[tuple[str, str]]:
    """(commit, path) of the secret-named paths in `git log` records (``<commit>\\0\\n<path>\\0<path>\\0...``)."""
    found: list[tuple[str, str]] = []
    for record in records:
        commit, _, names = record.partition(b"\0")
        if len(commit) in (40, 64):
            found += [(commit.decode(), path) for path in map(os.fsdecode, names.strip(b"\n").split(b"\0"))
                      if path and envfiles.maybe_secret(path.rpartition("/")[2])]
    return found


def _versions(root: Path, found: list[tuple[str, str]]) -> list[Version] | None:
    """Each found version's text, when it is a secret file's (a maybe-key holding a private key) and still there
    (a rewritten history drops it); None when git failed."""
    if not found:
        return []
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{commit}:{path}\n" for commit, path in found))
    if out is None:
        return None
    versions: list[Version] = []
    at = 0
    for commit, path in found:
        if at >= len(out):
            break
        line_end = out.find(b"\n", at)
        if line_end < 0:
            break
        header = out[at:line_end].split()
        if len(header) != 3 or header[1] != b"blob":  # "<name> missing": gone with a rewritten history
            at = line_end + 1
            continue
        size = int(header[2])
        body = out[line_end + 1:line_end + 1 + size]
        at = line_end + 1 + size + 1
        name = path.rpartition("/")[2]
        if size <= MAX_BYTES and (envfiles.by_name(name) or envfiles.KEY_BLOCK in body):
            versions.append(Version(commit, path, body.decode("utf-8", errors="replace")))
    return versions


def _env() -> dict[str, str]:
    return {**scrubbed_env(), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


def _git(root: Path, *args: str, stdin: str = "") -> bytes | None:
    try:
        done = subprocess.run([*GIT, *args], cwd=root, input=stdin.encode(), capture_output=True, env=_env(),
                              timeout=30.0, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
