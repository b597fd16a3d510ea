"""What a killed run left half done between a step and its commit, finished by the next run (see ``recorder``).

Two records survive a kill:
- the journal (``journal``): paths of steps and hooks that closed, not committed yet. The next run unstages
  what the killed run staged and commits them first, under the names of their steps;
- the baseline (``.git-baseline.json``): the tree as it was when the open step or hook began, and its label.
  What changed since is that step's work. When the next run opens the same step again (it was interrupted),
  the re-run starts from that baseline, so its commit holds the work of both attempts, even a file the re-run
  left as the killed attempt wrote it. When the next run goes on to anything else, the step had finished
  (its history row was saved, the kill came before its commit): its work is committed at once, under its own
  name and alone, and never rides in the next step's commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from specd.git import paths, tree
from specd.git.barrier import Barrier
from specd.git.journal import Journal, Pending
from specd.git.repo import Repo
from specd.git.settings import Settings
from specd.git.tree import Entry, Snapshot
from specd.state import atomic

RECOVERED = "recovered after an interrupted run"
APPROVED = "held for a secret, committed as approved"


def done(task: str, step: object, phase: object) -> str:
    """The subject of the commit a step's end makes."""
    return f"docs({task}): {step} complete" + (f" (phase {phase})" if phase else "")


def subjects(task: str, step: object, phase: object) -> set[str]:
    """Every subject the commit of a step's visit may have: the recorder's (``done``), or recovery's."""
    label = f"{step} (phase {phase})" if phase else f"{step}"
    return {done(task, step, phase), *(f"docs({task}): {label} complete ({why})" for why in (RECOVERED, APPROVED))}


@dataclass
class Left:
    """The step or hook a killed run had open: its label, the tree when it began, the paths changed since."""

    label: str
    before: Snapshot
    work: set[str]


class GitRecorder(Protocol):
    """What of ``recorder.GitRecorder`` this module uses (named here, not imported: the recorder imports this)."""

    task: str
    folder: str
    settings: Settings
    repo: Repo
    barrier: Barrier
    journal: Journal
    made: Pending
    pending: set[str]
    had_edits: set[str]
    left: Left | None
    resume_from: Snapshot | None
    docs: bool

    def commit(self, message: str) -> None: ...

    def snapshot(self) -> Snapshot: ...

    def forget_tree(self) -> None: ...


def save_open(path: Path, before: Snapshot, label: str) -> None:
    # Atomic, not fsynced: it must survive a kill of specd (the page cache does); after a power cut the
    # worst is that an interrupted step's changes are reported as uncommitted instead of committed.
    atomic.write_json(path, {"label": label, "paths": {p: [e.status, e.digest] for p, e in before.items()}},
                      durable=False)


def load_open(path: Path) -> tuple[Snapshot, str] | None:
    """The baseline and its label; None when there is none or it is unreadable (then it is no help). A baseline
    written before labels were kept is all paths, with no label."""
    try:
        data = dict(json.loads(path.read_text(encoding="utf-8")))
        label, entries = (str(data["label"]), dict(data["paths"])) if "paths" in data else ("", data)
        return {str(p): Entry(str(v[0]), str(v[1])) for p, v in entries.items()}, label
    except (OSError, ValueError, RecursionError, TypeError, IndexError, KeyError):
        return None


def recover(rec: GitRecorder, resumed: bool, finished: bool = False) -> None:
    """Finish what a killed run left half done: unstage what it staged, commit what its steps made. For a
    ``finished`` task (COMPLETE) that commit holds the steps' work alone: its record goes into the task's last
    commit, `run state COMPLETE`, which ends its branch."""
    rec.made = rec.journal.load()
    # The task folder is specd's to stage only when specd commits it, and only a run that went before could.
    folder = rec.settings.commit_docs and resumed
    staged = rec.repo.run("diff", "--cached", "--name-only", "-z", "--no-renames").split("\0")
    ours = sorted(p for p in staged if p and (folder and tree.inside(p, rec.folder) or p in rec.made.work)
                  and p not in rec.made.user_staged)
    if ours:  # a kill between `git add` and `git commit`; the user's own staged paths stay staged
        rec.forget_tree()
        paths.unstage(rec.repo, ours)
    now = rec.snapshot()
    rec.made.work = {p: label for p, label in rec.made.work.items() if p in now}
    if not rec.made.work:
        rec.journal.clear()
        return
    rec.pending |= rec.made.work.keys()
    rec.had_edits |= rec.made.user_staged & rec.made.work.keys()
    work = set(rec.made.work)
    if not work - rec.barrier.look(work, now):
        return  # all of it still waits for a person: a commit now would hold only the run state
    labels = ", ".join(rec.made.labels(work))
    approved = any((p, now[p].digest) in rec.barrier.approved for p in work)
    why = APPROVED if approved else RECOVERED
    message = f"docs({rec.task}): {labels} complete ({why})"
    if finished:
        _work_alone(rec, message)
    else:
        rec.commit(message)


def settle(rec: GitRecorder, opening: str | None, finished: bool) -> None:
    """Before the first step or hook this run opens (``opening``, its label) or its last commit (None): the
    killed run's open step is either opened again (the re-run starts from its baseline) or it had finished
    (``finished``): its work is committed now, under its name. A run that stops before either (a wait, say)
    names that work as unfinished in its last commit."""
    left, rec.left = rec.left, None
    if left is None:
        return
    if opening == left.label:
        rec.resume_from = left.before
        return
    for path in left.work:
        rec.made.work.setdefault(path, left.label)
    rec.journal.save(rec.made)  # whose it is survives another kill before the commit below
    if finished and left.work - rec.barrier.held.keys():
        _work_alone(rec, f"docs({rec.task}): {left.label} complete ({RECOVERED})")


def _work_alone(rec: GitRecorder, message: str) -> None:
    """A commit of the step's own work without the task folder: the run state that says what came after the step
    (the next step starting, or COMPLETE) goes into the commit that says so."""
    rec.docs = False
    try:
        rec.commit(message)
    finally:
        rec.docs = True
