"""The tree between two of specd's own commits, carried over instead of asked of `git status` again.

A step then costs three git processes: the `status` and the "complete" commit after it, and the
"starting" commit before the next one (plus a `git add` when a file is new, as a sealed history
segment is every 25 steps). Right after a commit the recorder knows the tree exactly: the status it
took, minus what it committed. Until the next step starts, in auto mode with no hooks, only specd
writes, and only in the task folder (the run state, its history, config.json). So the "starting"
commit takes the task folder whole (`commit --only` of a folder takes every tracked change in it,
deletions too), adds only the files that are new there, and the step's before-snapshot is the one
carried over.

It is dropped, and git asked again, whenever something besides specd may have changed the tree:
- any event not known to be harmless: a gate (a person was asked, and may edit while it waits), a
  hook (it ran a program; it has its own window anyway), a wait for another run's turn in the tree;
- HEAD moved (another run, or the user, committed meanwhile);
- another run has a step open, or changes not committed yet, in this tree (``windows``);
- more than ``STALE`` seconds passed (specd stopped with Ctrl-Z, or a wait no event announced);
- HEAD cannot be read as files (reftable, say): then every step asks git, as before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pathspec import GitIgnoreSpec

from specd.git import paths, tree
from specd.git.barrier import Barrier
from specd.git.repo import GitFailed, Repo
from specd.git.settings import Settings
from specd.git.tree import Hasher, Snapshot, inside
from specd.redact import redact
from specd.tasks.setup import GITIGNORE

# Events after which the carried tree still holds: nothing outside specd ran and nobody was waited for.
# A parked run is handed its next step only in a clone its worker found untouched (engine/parking.py).
HARMLESS = frozenset({"warning", "usage", "step_skipped", "agent_text", "agent_tool", "run_parked", "run_resumed"})
STALE = 10.0  # a backstop only: in auto mode the gap between two steps' commits is milliseconds (two fsyncs)


class Carry:
    def __init__(self, repo: Repo, task_dir: Path, folder: str, specd: str) -> None:
        self.repo, self.task_dir, self.folder, self.specd = repo, task_dir, folder, specd
        self.snapshot: Snapshot | None = None
        self._head: str | None = None
        self._known: set[str] = set()  # the task folder's files git knew of (or ignores) at the last commit
        self._at = 0.0
        self._ignore: GitIgnoreSpec | None = None

    def keep(self, snapshot: Snapshot, files: set[str] | None = None) -> None:
        """Right after a commit: ``snapshot`` is the tree now, as `git status` would show it."""
        head, files = self.repo.head_token(), self.files() if files is None else files
        if head is None or files is None:
            self.drop()
            return
        untracked = {p for p, e in snapshot.items() if not e.tracked and inside(p, self.folder)}
        self.snapshot, self._head, self._known, self._at = dict(snapshot), head, files - untracked, time.monotonic()

    def drop(self) -> None:
        self.snapshot = None

    def take(self, others: Callable[[], list[dict[str, str]]]) -> Snapshot | None:
        """The carried tree, if nothing but specd can have changed it since; used at most once."""
        snapshot, self.snapshot = self.snapshot, None
        if (snapshot is None or time.monotonic() - self._at > STALE or self.repo.head_token() != self._head
                or others()):
            return None
        return snapshot

    def new_files(self, files: set[str]) -> list[str]:
        """Files of the task folder (``files``, from ``files()``) git did not know at the last commit and does
        not ignore (by .specd/.gitignore; a file the user's own ignores cover makes `git add` fail, and then
        the recorder asks `git status`)."""
        ignore = self._spec()
        cut = len(self.specd.rstrip("/")) + 1
        return sorted(p for p in files - self._known
                      if not (inside(p, self.specd) and ignore.match_file(p[cut:])))

    def files(self) -> set[str] | None:
        """Every file of the task folder as git names it, transcripts/ left out (they only grow, and are
        git-ignored); None when a nested repository is in it (git would take it as one entry)."""
        found: set[str] = set()
        pending = [(self.task_dir, self.folder)]
        while pending:
            folder, name = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                return None
            for entry in entries:
                if entry.name == ".git":
                    return None
                if entry.is_dir(follow_symlinks=False):
                    if not (folder == self.task_dir and entry.name == "transcripts"):
                        pending.append((Path(entry.path), f"{name}/{entry.name}"))
                else:
                    found.add(f"{name}/{entry.name}")
        return found

    def _spec(self) -> GitIgnoreSpec:
        if self._ignore is None:
            try:
                text = (self.repo.top / self.specd / ".gitignore").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = GITIGNORE
            self._ignore = GitIgnoreSpec.from_lines(text.splitlines())
        return self._ignore


class GitRecorder(Protocol):
    """What of ``recorder.GitRecorder`` ``commit_carried`` uses (named here, not imported: the recorder imports
    this)."""

    folder: str
    settings: Settings
    repo: Repo
    barrier: Barrier
    carry: Carry
    hasher: Hasher

    def warn_barrier(self) -> None: ...

    def after_commit(self, committed: set[str]) -> None: ...

    def carried_to(self, now: Snapshot) -> None: ...


def commit_carried(rec: GitRecorder, message: str, carried: Snapshot) -> bool:
    """The commit from the carried tree: the task folder whole, with `git add` only for files new in it. False
    when git must be asked after all (a new file git ignores, a failed command)."""
    now, files = dict(carried), rec.carry.files()
    if files is None:
        return False
    if rec.settings.commit_docs:  # with nothing pending, the task folder is all this commit could hold
        new = rec.carry.new_files(files)
        secrets = rec.barrier.withhold(set(new), lambda p: True)  # new files: git tracks none of them
        rec.warn_barrier()
        try:
            if set(new) - secrets:  # `git add`, which refuses a file git ignores (see ``Carry.new_files``)
                rec.repo.run_paths("add", paths=[p for p in new if p not in secrets])
            if paths.commit(rec.repo, redact(message), [rec.folder]):
                rec.after_commit(set())
        except GitFailed:
            return False
        now = {p: e for p, e in now.items() if not (e.tracked and tree.inside(p, rec.folder))}
        now |= {p: tree.Entry("??", rec.hasher(rec.repo.top / p)) for p in secrets}
    rec.carried_to(now)
    rec.carry.keep(now, files)
    return True
