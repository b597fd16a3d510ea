"""specd checks its own machinery around every step and hook, whatever agent or command ran them.

Before a step or hook runs (after specd's own saves for it), the machinery is fingerprinted and its
small files copied (see ``places`` for what counts). When it ends, anything changed meanwhile
(content, mode, a new or a removed file) is put back from the copy and the step is BLOCKED with
the paths named, before any later hook or step is resolved, so nothing the agent wrote there runs.
This is the backstop for every backend, jailed or not; Claude Code is also told no at write time
(``deny_rules``).

A change the jail made impossible is not the step's: when nothing of the step ran outside the jail
(``jail.unjailed``) and the jail held that path read-only, someone outside it wrote there (you, editing the
pipeline while a step runs). That change is kept, and said, instead of undone.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from specd.engine.machinery.snapshot import Fingerprint, Reader, differences, restore
from specd.events import EventBus
from specd.system import environments, jail
from specd.system.machinery import TOOL_WHY, is_tool_config
from specd.system.places import GitDirs, Place, ancestors, git_dirs, places

RUN_STATE = ".pipeline-state"  # the run state's files in the task folder: the snapshot, its history, its shape

__all__ = ["Machinery", "Moved", "Tampered", "deny_rules"]


class Tampered(Exception):
    """The step or hook changed specd's machinery; the changes were undone (where they could be)."""

    def __init__(self, changed: dict[str, str], failed: list[str]) -> None:
        listed = ", ".join(f"{path} ({how})" for path, how in sorted(changed.items()))
        text = f"changed specd's machinery: {listed}; undone"
        if failed:
            text += f", except {', '.join(sorted(failed))}: restore {'it' if len(failed) == 1 else 'them'} " \
                    "from git or by hand before going on"
        tools = sorted(path for path in changed if is_tool_config(tuple(path.split("/"))))
        if tools:  # named again only among specd's own files
            text += f" ({', '.join(tools) + ': ' if len(tools) < len(changed) else ''}{TOOL_WHY})"
        super().__init__(text)
        self.changed, self.failed = changed, failed


class Moved(Tampered):
    """The step or hook moved one of the tree's environments away from where the jail looks for it."""

    def __init__(self, moved: list[str]) -> None:
        one = len(moved) == 1
        Exception.__init__(self, (
            f"moved or replaced {', '.join(moved)}, the project's own environment{'' if one else 's'}, or made "
            f"{'it' if one else 'them'} no longer one (a workspace left out of package.json, say): the jail shows "
            f"{'it' if one else 'them'} read-only where found, and the next jail would not; put "
            f"{'it' if one else 'them'} back before `specd continue`"))
        self.changed, self.failed = dict.fromkeys(moved, "moved"), list(moved)


class Machinery:
    def __init__(self, root: Path, task_dir: Path) -> None:
        self.root, self.task_dir = root, task_dir
        self.reader = Reader()
        self._git: tuple[object, GitDirs | None] | None = None  # (what it was found from, the dirs)
        self._where: tuple[GitDirs | None, list[Place], list[Path]] | None = None  # places and guards, per git
        self.outside: list[str] = []  # what the last check kept: changed where the jail let no step write

    def take(self) -> tuple[Fingerprint, list[Place]]:
        """The machinery now, and where it was looked for (the check looks in the same places: a
        ``core.hooksPath`` the step set must not turn a folder of the user's into "new" files)."""
        git = self.git()
        if self._where is None or self._where[0] != git:
            found = places(self.root, self.task_dir, git)
            self._where = (git, found, self._guards(found))
        return self.reader.take(self._where[1], self._where[2]), self._where[1]

    def undo(self, before: Fingerprint, found: list[Place], jailed: frozenset[Path] | None = None) -> Tampered | None:
        """Compare with ``before``; put every change back but those made where the jail let no step write.

        ``jailed``: the step ran wholly in the jail, and these of ``.git`` and ``.specd`` existed as it began.
        The jail's binds are worked out only when something changed (a walk of the task folder); a read-only
        bind of something that did not exist when the step began is left out, since the jail never made it."""
        after = self.reader.take(found, self._guards(found))
        changed = differences(before, after)
        for path in [p for p, how in changed.items() if how == "created" and after[p].kind == "dir"]:
            if path in self._guards(found):  # a plain folder made on the way to a place (the agent's .claude/ for
                del changed[path]  # its agents): nothing redirects a restore there, and it is the step's own
        if changed and jailed is not None:
            top = self.root.resolve()
            mounts = [(ro, self.root / path.relative_to(top)) for ro, path in jail.read_only(self.root, self.task_dir)
                      if path.is_relative_to(top)]
            mounts = [(ro, path) for ro, path in mounts if not ro or path in before or path in jailed]
            kept = [path for path in changed if _read_only(path, mounts)]
        else:
            kept = []
        self.outside = [self._name(path) for path in sorted(kept)]
        for path in kept:
            del changed[path]
        if not changed:
            return None
        guards = set(self._guards(found))
        if any(p in guards and how != "mode changed" for p, how in changed.items()):
            failed = sorted(changed)  # a folder above the machinery was replaced: writing there is not safe
        else:
            failed = restore(before, changed)
        self.reader.seen.clear()  # restored files have new stats
        return Tampered({self._name(p): how for p, how in changed.items()}, [self._name(p) for p in failed])

    def _guards(self, found: list[Place]) -> list[Path]:
        if self._where is not None and found is self._where[1]:
            return self._where[2]  # worked out once for these places (``take``): a check asks three times a step
        return list(dict.fromkeys(path for place in found for path in ancestors(self.root, place)))

    @contextmanager
    def watch(self, events: EventBus, what: str) -> Iterator[Callable[[], None]]:
        """Around one step or hook: raises ``Tampered`` when it changed the machinery (after undoing it).

        An interruption (Ctrl-C, `specd cancel`) still has its changes undone, and stays an interruption. What it
        yields is called after specd saved the run state while the watch is open (a parallel group records each
        member as it ends): the run-state files as they are now become the baseline, and nothing else does."""
        before, found = self.take()
        envs = {path: _mark(path) for path in environments.found(self.root)} if jail.active() else {}
        launched = jail.unjailed()
        present = frozenset(path for path in (self.root / ".git", self.root / ".specd") if path.exists())
        interrupted = False

        def saved() -> None:
            now = self.reader.take(found, self._guards(found))
            for path in set(before) | set(now):
                inside = path.relative_to(self.task_dir).parts if path.is_relative_to(self.task_dir) else ()
                if inside and inside[0].startswith(RUN_STATE):
                    if path in now:
                        before[path] = now[path]
                    else:
                        before.pop(path, None)

        try:
            yield saved
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            tampered = self.undo(before, found, present if jail.unjailed() == launched else None)
            now = set(environments.found(self.root)) if envs and jail.unjailed() == launched else set(envs)
            moved = [self._name(path) for path, mark in envs.items()  # a `sandbox: false` hook may remake one
                     if path not in now or (_mark(path) != mark and jail.unjailed() == launched)]
            tampered = tampered or (Moved(moved) if moved else None)
            if self.outside:
                events.emit("notice", message=f"changed while {what} ran, from outside the jail (it could not "
                                              f"write there): {', '.join(self.outside)}; kept")
            if tampered is not None:
                events.emit("warning", message=f"{what} {tampered}")
                if not interrupted:
                    raise tampered  # replaces the step's own failure, if any: this one is the cause to fix

    def git(self) -> GitDirs | None:
        """The repository's folders; asked of git again only when its config files moved."""
        marks = [self.root / ".git"]
        if self._git is not None and isinstance(self._git[1], GitDirs):
            marks += [self._git[1].common / "config", self._git[1].own / "config.worktree"]
        now = tuple(_mark(path) for path in marks)
        if self._git is None or self._git[0] != now:
            found = git_dirs(self.root)
            if found is not None:
                now = tuple(_mark(p) for p in (self.root / ".git", found.common / "config",
                                                found.own / "config.worktree"))
            self._git = (now, found)
        return self._git[1]

    def _name(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def _read_only(path: Path, mounts: list[tuple[bool, Path]]) -> bool:
    """Whether the last of ``mounts`` holding ``path`` (later binds lie over earlier ones) is read-only."""
    found = False
    for read_only, mount in mounts:
        if path == mount or mount in path.parents:
            found = read_only
    return found


def _mark(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):  # a `.git` folder's times move with every commit; only replacing it matters
        return st.st_mode, st.st_ino
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino


def deny_rules(root: Path, task_dir: Path) -> list[str]:
    from specd.system.places import deny_rules as rules

    return rules(root, task_dir, Machinery(root, task_dir).git())
