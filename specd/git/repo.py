"""One repository as specd talks to it: every git call checked, serialized and retried.

Several `specd continue` processes may share one repository. Git's own ``index.lock`` makes a
second writer fail instead of wait, so specd holds a lock of its own (in the git common dir,
shared by all worktrees of the repository) around each group of git calls. The user's own git
commands do not take that lock, so a transient ``index.lock`` failure is still retried.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from specd.redact import scrubbed_env
from specd.system.gitsafe import OPTIONS

FALLBACK_IDENTITY = ["-c", "user.name=specd", "-c", "user.email=specd@localhost"]
# What git says (LC_ALL=C) when it refuses a commit for want of an identity (config or GIT_* variables).
NOBODY = ("Please tell me who you are", "unable to auto-detect email address", "empty ident name")
RETRIES = 6  # backoff 0.05 s doubling: about 3 s in all, enough for a user's `git status` to finish
LOCK_WAIT = 600.0  # a safety net only: git calls are short, another specd holds the lock for seconds
# Status and diff may refresh the index opportunistically; that must never take index.lock from a writer.
QUIET_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# specd's own git calls run nothing the repository names: no hooks, no fsmonitor, nothing of a submodule (gitsafe).
NO_HOOKS = list(OPTIONS)
FROM_STDIN = ["--pathspec-from-file=-", "--pathspec-file-nul"]


def git_env() -> dict[str, str]:
    """The environment of specd's git calls: no secrets (a filter or credential helper the repository
    configures still runs), but PATH, HOME and the GIT_* identity are kept."""
    return {**scrubbed_env(), **QUIET_ENV}


class GitFailed(Exception):
    """A git command that failed; the message names the command and quotes git."""

    def __init__(self, args: list[str], output: str, paths: int = 0) -> None:
        command = shlex.join(args) + (f" <{paths} path{'s' if paths != 1 else ''} on stdin>" if paths else "")
        super().__init__(f"`git {command}` failed: {output.strip() or 'no output'}")


def nul(paths: Iterable[str]) -> str:
    """Paths as git reads them with ``-z`` or ``--pathspec-file-nul``: each ended by a NUL."""
    return "\0".join([*paths, ""])  # the strings themselves, not a copy of each: a list may hold 200,000


def git(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """One unlocked git call whose result the caller checks (repository discovery, demo setup, a question about
    ignored paths handed on ``stdin``)."""
    return subprocess.run(["git", *NO_HOOKS, *args], cwd=root, input=stdin, capture_output=True, text=True,
                          check=False, errors="surrogateescape", env=git_env())


def blob(root: Path, spec: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``spec`` (``REV:path``), or None when there is no such file there."""
    done = subprocess.run(["git", *NO_HOOKS, "cat-file", "blob", spec], cwd=root, capture_output=True, check=False,
                          env=git_env())
    return done.stdout[:limit] if done.returncode == 0 else None


def identity(top: Path) -> list[str]:
    """``-c`` options naming specd as the author when git knows nobody, else none.

    `git var` fails exactly when a commit would ask "Please tell me who you are" (config or env).
    """
    known = all(git(top, "var", f"GIT_{who}_IDENT").returncode == 0 for who in ("AUTHOR", "COMMITTER"))
    return [] if known else FALLBACK_IDENTITY


@dataclass
class Repo:
    top: Path  # the work tree's top folder; every path specd hands git is relative to it
    common_dir: Path
    identity: list[str] = field(default_factory=list)  # FALLBACK_IDENTITY once git refused a commit for want of one
    git_dir: Path | None = None  # this work tree's own (a worktree's differs from the common dir)
    _lock: FileLock | None = None

    @classmethod
    def open(cls, folder: Path) -> Repo | None:
        """The repository holding ``folder``, or None when there is none (or git is missing)."""
        try:
            found = git(folder, "rev-parse", "--show-toplevel", "--git-common-dir", "--git-dir")
        except OSError:
            return None
        lines = found.stdout.splitlines()
        if found.returncode != 0 or len(lines) != 3:
            return None
        top = Path(lines[0])
        # No `git var` up front (two processes every run): the identity is asked for when git refuses to commit.
        return cls(top, (folder / lines[1]).resolve(), git_dir=(folder / lines[2]).resolve())

    @contextmanager
    def locked(self) -> Iterator[None]:
        """specd's lock for this work tree; re-entrant within one process. Runs sharing a tree share its index,
        so their git calls take turns; a worktree (each `specd run` task's) has an index, HEAD and branch of its
        own, so its runs need not wait for another tree's commits (20 tasks at once waited in one queue)."""
        if self._lock is None:
            self._lock = FileLock(str((self.git_dir or self.common_dir) / "specd-git.lock"), timeout=LOCK_WAIT)
        try:
            self._lock.acquire(poll_interval=0.01)  # many waiting runs: poll often, each holds it briefly
        except Timeout:
            raise GitFailed(["(lock)"], f"another specd held {self._lock.lock_file} for {LOCK_WAIT:g} s") from None
        try:
            yield
        finally:
            self._lock.release()

    def run(self, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,),
            env: dict[str, str] | None = None) -> str:
        """Run git in the top folder; retry index.lock clashes; raise GitFailed on any other failure."""
        return self._call(list(args), stdin, ok, env=env).stdout

    def run_paths(self, *args: str, paths: Collection[str],
                  ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        """git ``args`` over ``paths`` read from stdin, one pathspec each (literal, see ``_call``): argv holds
        only so many (200,000 paths failed with "Argument list too long"), and a name may hold anything but NUL."""
        return self._call([*args, *FROM_STDIN], nul(paths), ok, len(paths))

    def _call(self, args: list[str], stdin: str | None, ok: tuple[int, ...], paths: int = 0,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        for attempt in range(RETRIES):
            argv = [*NO_HOOKS, "--literal-pathspecs", *self.identity, *args]
            # surrogateescape: a file name that is not UTF-8 (an agent may make one) is carried through as it is,
            # and reaches git again (a commit's paths on stdin) as the same bytes
            result = subprocess.run(["git", *argv], cwd=self.top, input=stdin, capture_output=True, text=True,
                                    errors="surrogateescape", check=False, env={**git_env(), **(env or {})})
            if result.returncode in ok:
                return result
            output = result.stderr + result.stdout
            if not self.identity and any(words in output for words in NOBODY):
                self.identity = FALLBACK_IDENTITY  # git knows nobody here: specd commits as itself (and says so)
                continue
            if "index.lock" not in output or attempt == RETRIES - 1:
                raise GitFailed(args, output, paths)
            time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def head(self) -> str | None:
        try:
            return self.run("rev-parse", "--verify", "--quiet", "HEAD").strip() or None
        except GitFailed:
            return None  # no commit yet

    def head_token(self) -> str | None:
        """What HEAD names, read from its files without a git process: it differs after any commit, reset or
        checkout. None when the files cannot say (a packed or reftable ref); callers then ask git."""
        own = self.git_dir or self.common_dir
        try:
            head = (own / "HEAD").read_text(encoding="utf-8").strip()
            if not head.startswith("ref: "):
                return head  # detached: the commit itself
            for base in (own, self.common_dir):  # a branch's file is in the common dir, shared by worktrees
                ref = base / head[5:]
                if ref.is_file():
                    return f"{head} {ref.read_text(encoding='utf-8').strip()}"
        except (OSError, UnicodeDecodeError):
            pass
        return None

    def rel(self, path: Path) -> str:
        """``path`` as git names it: relative to the top folder, with forward slashes."""
        return path.resolve().relative_to(self.top.resolve()).as_posix()
