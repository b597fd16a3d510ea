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
    if asked is None or isinstance(asked, Cut) or not asked.strip():
        return Past((), True)
    common, *tips = os.fsdecode(asked).splitlines()
    # In git's folder, shared by worktrees, and read-only to every jail: an agent cannot say it was searched.
    cache = (root / common) / CACHE
    seen, complete, found = _read(cache)
    now = sorted(set(tips))
    if now != seen:
        more = _log(root, seen)
        if more is None:  # git failed: what was found before stands, and the next search asks again
            return Past(tuple(_versions(root, found)), complete)
        found, complete = list(dict.fromkeys([*more[0], *found])), complete and more[1]
        with contextlib.suppress(OSError):  # a cache: not durable; a read-only repository searches every time
            atomic.write_json(cache, {"tips": now, "complete": complete, "found": found}, durable=False)
    past = Past(tuple(_versions(root, found)), complete)
    _memo[str(root)] = (time.monotonic(), past)
    return past


def _read(cache: Path) -> tuple[list[str], bool, list[tuple[str, str]]]:
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        return (sorted(map(str, data["tips"])), bool(data["complete"]),
                [(str(commit), str(path)) for commit, path in data["found"]])
    except (OSError, ValueError, KeyError, TypeError):
        return [], True, []


def _log(root: Path, seen: list[str]) -> tuple[list[tuple[str, str]], bool] | None:
    """(commit, path) of each secret-named file a commit not reachable from ``seen`` added or changed, newest
    first, and whether git got through them all within ``LIMIT``; None when git failed."""
    args = ["log", "--all", "--ignore-missing", "--format=%x01%H", "-z", "--name-only", "--diff-filter=AM",
            "--no-renames", *(f"^{tip}" for tip in seen), "--", *envfiles.NAME_GLOBS]
    out = _git(root, *args, timeout=LIMIT)
    if out is None:
        return None
    found: list[tuple[str, str]] = []
    for record in out.split(b"\x01")[1:]:
        commit, _, names = record.partition(b"\0")
        if len(commit) not in (40, 64) or (isinstance(out, Cut) and not record.endswith(b"\0")):
            continue  # the record the time limit cut
        found += [(commit.decode(), path) for path in map(os.fsdecode, names.strip(b"\n").split(b"\0"))
                  if path and envfiles.maybe_secret(path.rpartition("/")[2])]
    return found, not isinstance(out, Cut)


def _versions(root: Path, found: list[tuple[str, str]]) -> list[Version]:
    """Each found version's text, when it is a secret file's (a maybe-key holding a private key)."""
    if not found:
        return []
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{commit}:{path}\n" for commit, path in found))
    versions: list[Version] = []
    at = 0
    for commit, path in found:
        if out is None or isinstance(out, Cut) or at >= len(out):
            break
        line_end = out.find(b"\n", at)
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


class Cut(bytes):
    """What git wrote before ``LIMIT`` stopped it."""


def _git(root: Path, *args: str, timeout: float = 30.0, stdin: str = "") -> bytes | None:
    env = {**scrubbed_env(), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run([*GIT, *args], cwd=root, input=stdin.encode(), capture_output=True, env=env,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as cut:
        return Cut(cut.stdout or b"")
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None
