"""The step commits: each holds the task folder and what that step (or its hooks) changed.

Before each step or hook, the recorder notes the dirty paths and their content; after it, the
paths whose content moved are that step's work. Nothing else is ever added: not the user's own
edits or untracked files from before, not another task's folder, not a secret-looking file git
does not already track, not a file holding a secret (``barrier``: it waits for a person), not
transcripts (unless ``commit_transcripts``). Every git failure becomes a visible ``warning``
event, but one: a "starting" commit the machine refuses (a full disk) stops the run before the agent.

Between two steps, with nothing but specd at work, the "starting" commit needs no `git status`: the
tree is carried over from the last commit (see ``carry``), so a step costs three git processes.

A step's or hook's changes are journaled when it closes (see ``journal``), so a run killed before
the commit loses nothing: the next run commits them first, and unstages what the killed run staged;
a step open when the run was killed is finished the same way (see ``recovery``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from specd.events import Event, EventBus
from specd.git import hidden, ignored, paths, publish, recovery, tree
from specd.git.barrier import Barrier
from specd.git.carry import HARMLESS, Carry, commit_carried
from specd.git.journal import Journal, Pending, short_name
from specd.git.repo import GitFailed, Repo
from specd.git.settings import Settings
from specd.git.shared_tree import own_output
from specd.git.tree import Snapshot
from specd.git.windows import Windows, contested
from specd.redact import redact
from specd.system.machine import machine_refusal


class GitRecorder:
    def __init__(self, repo: Repo, settings: Settings, task: str, task_dir: Path, events: EventBus) -> None:
        self.repo, self.settings, self.task, self.task_dir, self.events = repo, settings, task, task_dir, events
        self.folder, self.specd = repo.rel(task_dir), repo.rel(settings.specd_dir)
        self.scope = repo.rel(settings.root)
        self.windows = Windows(repo.git_dir or repo.common_dir)
        self.own_output = own_output(repo.top)  # `specd continue t 2>e1.txt`: never a step's work
        self.before: Snapshot | None = None  # set while a step or hook is open
        self.opened_ns = 0  # when it opened: what it left where git does not look since then (``ignored``)
        self._ignored: list[str] | None = None  # what git ignored as of ``_now``, when it was asked
        self.pending: set[str] = set()  # this run's changes outside the task folder, not yet committed
        self.reported: set[str] = set()  # paths the open step's agent said it changed
        self.had_edits: set[str] = set()  # pending paths the user had edited before the step changed them
        self.warned: set[str] = set()
        self.hasher = tree.Hasher()
        self._now: Snapshot | None = None  # the tree as of this event, until specd itself changes the index
        self.baseline = task_dir / ".git-baseline.json"  # survives a crash, so a re-run keeps its attribution
        self.journal = Journal(task_dir)  # pending paths of finished steps and hooks, until committed
        self.made = Pending()  # who made each pending path (as journaled)
        self.label = ""  # the open step or hook
        self.finished = ""  # the subject of the last step's commit, made with the run's last (``last``)
        self.docs = True  # the task folder goes into each commit (with commit_docs); see ``recovery.recover``
        self.left: recovery.Left | None = None  # the step or hook a killed run had open (see ``recovery``)
        self.resume_from: Snapshot | None = None  # its baseline, when this run opens it again
        self.carry = Carry(repo, task_dir, self.folder, self.specd)  # the tree after the last commit (see carry)
        self._carried: Snapshot | None = None  # taken for this event's commit, when it still holds
        self.barrier = Barrier(repo, settings.root, self.folder, self.specd)  # a file with a secret waits

    def __call__(self, event: Event) -> None:
        carries = self._carries(event)
        if not carries and event.kind not in HARMLESS:
            self.carry.drop()  # a gate, a hook, a wait for the tree: the tree may have changed without specd
        actions = self._actions(event.kind, event.data)
        if not actions:
            return
        try:
            # One hold of the lock per event: no other run commits between this step's close and its commit.
            with self.repo.locked():
                self._now = None
                self.barrier.refresh()
                self._carried = self.carry.take(self.windows.others) if carries else None
                for action in actions:
                    try:
                        action()
                    except (GitFailed, OSError) as exc:
                        refused = machine_refusal(exc, self.repo.git_dir or self.repo.common_dir)
                        if refused is not None and event.kind == "step_started":
                            # No agent runs when the step's starting point cannot be recorded: its work would
                            # be lost with the disk, and the step paid for twice. The run stops, resumable.
                            raise refused from None
                        self._warn(f"git: {exc}")
                self.windows.publish(self.task, self.before, self.pending)
        except GitFailed as exc:  # the lock itself (a read-only .git, say)
            self._warn(f"git: {exc}")
        except OSError as exc:
            if event.kind == "step_started" and machine_refusal(exc, None) is exc:
                raise
            self._warn(f"git: {exc}")

    def _actions(self, kind: str, data: dict[str, Any]) -> list[Callable[[], None]]:
        """What an event asks of git, in order; each action fails (and warns) alone."""
        if kind == "run_started":
            return [lambda: recovery.recover(self, bool(data.get("resumed")), bool(data.get("finished"))), self._start]
        label = (f"{data.get('step')} {data.get('point')} hook {short_name(str(data.get('hook')))}"
                 if kind == "hook_started" else f"{data.get('step')} checks" if kind == "checks_started"
                 else f"{data.get('step')}" + (f" (phase {data['phase']})" if data.get("phase") else ""))
        # first, whatever comes: the step a killed run had open is opened again, or it had finished
        settle = partial(recovery.settle, self, label if kind != "run_finished" else None,
                         data.get("status", "COMPLETE") == "COMPLETE")
        if kind == "step_started" and data.get("attempt", 1) == 1:
            return [settle,
                    lambda: self.settings.phase_start(self.repo, self.task_dir, data.get("phase"), data["step"]),
                    lambda: self.commit(f"docs({self.task}): starting {data['step']}"), self._publish,
                    lambda: self._open(label)]
        if kind in ("step_started", "hook_started", "checks_started"):
            return [settle, lambda: self._open(label)]
        if kind in ("hook_finished", "checks_finished"):
            return [self._close]  # a hook's changes (or what the code a check ran made) go into the next commit
        if kind == "step_finished":
            done = recovery.done(self.task, data["step"], data.get("phase"))
            if data.get("last"):  # the run ends next, whatever comes: one commit holds the step and the run's state
                return [self._close, lambda: setattr(self, "finished", done)]
            return [self._close, lambda: self.commit(done), self._publish]
        if kind == "run_finished":
            return [settle, self._close, lambda: self.commit(self._final(str(data["status"]))), self._end,
                    self._publish]
        return []

    def _final(self, status: str) -> str:
        """The run's last commit: the last step's, named after it, when it waited for it; else a run that stopped
        inside a step commits that step's work so far, and says so."""
        finished, self.finished = self.finished, ""
        if finished:
            return finished
        unfinished = self.made.labels(self.pending - self.barrier.held.keys()) if status != "COMPLETE" else []
        return f"docs({self.task}): run state {status}" + (
            f" (with the unfinished work of {', '.join(unfinished)})" if unfinished else "")

    def note_reported(self, reported: Iterable[str]) -> None:
        """Paths an agent reported as its own work (command agent result field ``files``)."""
        for path in reported:
            try:
                self.reported.add(self.repo.rel(self.settings.root / path))
            except (ValueError, OSError):
                continue  # outside the repository: never ours to commit

    def _start(self) -> None:
        now = self.snapshot()
        self.opened_ns = ignored.written(self.baseline) if self.baseline.exists() else 0  # a killed step's
        earlier = recovery.load_open(self.baseline)  # the last run stopped inside a step: what changed since is its
        if earlier is not None:  # work (see ``recovery``)
            work = {p for p in tree.changed(earlier[0], now) if p in now and not self._specd(p)} - self.own_output
            self.pending |= work
            self.left = recovery.Left(earlier[1], earlier[0], work) if earlier[1] else None
        others = self.windows.others()  # what other runs' open steps are changing is not the user's
        dirty = [p for p, e in now.items() if not self._specd(p) and p not in self.pending | self.own_output
                 and not contested(p, e.digest, others)]
        if dirty:
            self._warn(f"{len(dirty)} path{'s' if len(dirty) != 1 else ''} outside .specd/ "
                       f"{'have' if len(dirty) != 1 else 'has'} uncommitted changes (see `git status`); specd "
                       "leaves them out of its commits unless a step changes them")
        if not self.pending and self.left is None:
            self.carry.keep(now)  # the first "starting" commit starts from this tree, as a later one from the last

    def _open(self, label: str) -> None:
        resumed, self.resume_from = self.resume_from, None
        self.before, self.label = self.snapshot() if resumed is None else resumed, label
        self.reported = set()
        recovery.save_open(self.baseline, self.before, label)
        # the baseline's own time: the clock of the files' filesystem, as a compiled file's will be
        self.opened_ns = self.opened_ns if resumed is not None and self.opened_ns else ignored.written(self.baseline)

    def _close(self) -> None:
        if self.before is None:
            return
        before, self.before, after = self.before, None, self.snapshot()
        # what it left where git does not look, and compiled Python git would take (a .gitignore without *.pyc)
        loose = [path for path, entry in after.items() if entry.status == "??" and path.endswith(ignored.SUFFIXES)]
        # source hidden by a rule git ignores or in a repository of its own ("sub/") is held; by the step's rule, said
        moved, repos = tree.changed(before, after), [p for p, e in after.items() if e.status == "??" and p[-1] == "/"]
        keys = [p for p in moved if tree.untracked_secret(p, after)]  # never committed: .env, .npmrc
        held, shown = hidden.look(self.repo.top, self._ignored or [], self.opened_ns - ignored.SLACK_NS, list(moved),
                                  repos, keys) if self.opened_ns else ({}, {})
        self.barrier.hide(held)
        for line in [*ignored.after(self.repo.top, [*(self._ignored or []), *loose], self.opened_ns, self.label,
                                    {**held, **shown}), *hidden.said(shown, self.label)]:
            self._warn(line)
        for path in loose:
            if not os.path.lexists(self.repo.top / path):
                del after[path]  # removed: not the step's work
        others, fresh = self.windows.others(), False
        # Only paths dirty now: one that went clean was reverted, or committed by another run.
        changed = {p for p in moved & after.keys() if p not in self.own_output}
        self.barrier.look({p for p in changed if not tree.untracked_secret(p, after)}, after)  # that: never added
        for path in changed:
            if self._specd(path):
                continue  # the task folder is committed anyway; specd's config and other tasks never are
            if path in self.reported or not contested(path, after[path].digest, others):
                self.pending.add(path)
                fresh = fresh or path not in self.made.work
                self.made.work.setdefault(path, self.label)
                if path in before:
                    self.had_edits.add(path)
                    if before[path].status[0] not in " ?":
                        self.made.user_staged.add(path)
        # Journaled before any commit is tried; the baseline is spent (a kill now loses nothing).
        if fresh:
            self.journal.save(self.made)
        self.baseline.unlink(missing_ok=True)

    def _carries(self, event: Event) -> bool:
        """Whether this event's commit may start from the tree carried over from the last commit."""
        starting = event.kind == "step_started" and event.data.get("attempt", 1) == 1
        return ((starting or event.kind == "run_finished") and self.before is None and not self.pending
                and not self.settings.commit_transcripts and not self.barrier.held)

    def commit(self, message: str) -> None:
        carried, self._carried = self._carried, None
        if carried is not None and commit_carried(self, message, carried):
            return
        after = self.snapshot()
        docs = self.settings.commit_docs and self.docs
        chosen = {p for p in after if tree.inside(p, self.folder)} if docs else set()
        forced = (self.settings.transcripts(self.repo, self.task_dir)
                  if self.settings.commit_docs and self.settings.commit_transcripts else [])
        if self.settings.commit_code:
            chosen |= self.pending
        else:
            self.pending.clear()  # the user commits code changes themselves
            self._journal_done(set(self.made.work))
        withheld = self.barrier.withhold(chosen, lambda p: p in after and not after[p].tracked)
        chosen = {p for p in chosen - withheld if tree.committable(self.repo.top, p, after)}
        chosen -= self.barrier.look({p for p in chosen if p in after}, after)  # they stay pending
        self.warn_barrier()
        self._now = None  # adding and committing change the statuses
        paths.stage(self.repo, forced)  # transcripts are git-ignored: staged as `git add -f` would
        # Only untracked paths need staging: a commit of only some paths takes a tracked path's content (or
        # its deletion) from the tree. A path git shows as dirty is the only kind with something to commit.
        paths.stage(self.repo, sorted(p for p in chosen if p in after and not after[p].tracked))
        dirty = {p for p in chosen if p in after}
        chosen |= set(forced)
        if (dirty or forced) and paths.commit(self.repo, redact(message), sorted(chosen)):
            self.after_commit(dirty)
            # The committed paths are clean now: the step opened next starts from this, without a status.
            self._now, self._ignored = {p: e for p, e in after.items() if p not in chosen}, None
            self.carry.keep(self._now)
        self.pending -= chosen | withheld
        self._journal_done(chosen | withheld)

    def _publish(self) -> None:
        """With SPECD_GIT_PUSH=<remote> (a Temporal worker's run), each commit is pushed at once; the "starting"
        commit holds the state that says the step before finished, and is pushed before the step's agent starts,
        so a worker that dies in a step never takes a finished step with it. A lapsed lease stops the run."""
        remote = os.environ.get("SPECD_GIT_PUSH")
        if remote:
            publish.push(self.repo, remote)  # under the worker's lease, a fast-forward only (git/publish.py)

    def _journal_done(self, done: set[str]) -> None:
        if not self.made.work.keys() & done:
            return
        self.made.work = {p: label for p, label in self.made.work.items() if p not in done}
        self.made.user_staged -= done
        self.journal.save(self.made)  # or removes it, once nothing is left

    def forget_tree(self) -> None:
        self._now = None  # specd itself changed the index: the next snapshot asks git again

    def carried_to(self, now: Snapshot) -> None:
        self._now, self._ignored = now, None  # the tree after a commit made from the carried one (``carry``)

    def snapshot(self) -> Snapshot:
        if self._now is None:
            self._ignored = []
            self._now = tree.take(self.repo, self.scope, self.hasher, self._ignored)
        return self._now

    def after_commit(self, committed: set[str]) -> None:
        edited = sorted(committed & self.had_edits)
        self.had_edits -= committed
        if edited:
            self._warn(f"committed {', '.join(edited)}: the step changed {'it' if len(edited) == 1 else 'them'}, "
                       "but there were uncommitted edits from before the step too; they are in the commit")
        if self.repo.identity and "identity" not in self.warned:
            self.warned.add("identity")
            self._warn("no git identity configured; committed as specd <specd@localhost> "
                       "(set one with `git config user.email you@example.com`)")

    def warn_barrier(self) -> None:
        for message in self.barrier.news(self.task):
            self._warn(message)

    def _end(self) -> None:
        self.baseline.unlink(missing_ok=True)

    def _specd(self, path: str) -> bool:
        return tree.inside(path, self.specd) or tree.inside(path, self.folder)

    def _warn(self, message: str) -> None:
        self.events.emit("warning", message=message)

