"""The project's one control plane: a lock held for its whole life, and ``.specd/control.json`` naming it.

Two processes each running answered tasks would start the same task twice (one would lose on the task lock,
but only after making a worktree or a child), and a person could not tell which one to look at. So the role
is claimed: `specd ui` (and `specd serve`) and `specd run --keep-waiting` take the main tree's
``.specd/control.lock`` (flock: the kernel frees it when its holder dies, so a record left by a killed one is
simply taken over) and write who they are beside it. A second claim is refused, naming the first.

The record names the dashboard's address without its token: `.specd/` is in every jail, read-only, and a token
there was the model's to read (`cat .specd/control.json`) and to answer its own gates with, wherever the page is
reachable. The whole address lives in the user's own state folder (``private``, under HOME, which no jail shows),
0600, for `specd mcp` to ask the plane with; a person has it from where the plane printed it. The record is never
committed (``.specd/.gitignore``; an older project's ignore file gets the line once).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from specd.errors import UsageError
from specd.state import atomic
from specd.state.lock import pid_alive
from specd.state.model import now
from specd.tasks import home
from specd.tasks.project import Project

FILE, LOCK = "control.json", "control.lock"


@dataclass(frozen=True)
class Record:
    pid: int
    command: str  # what was started: `specd ui`, `specd run --keep-waiting a b`
    started: str
    host: str
    url: str = ""  # the dashboard's address with its token; empty for `specd run --keep-waiting`

    def identity(self) -> str:
        """What the runs this plane starts carry (``home.PLANE_ENV``): pid and start, so no later plane shares it."""
        return f"{self.pid} {self.started}"

    def text(self) -> str:
        """The record for people: the command, its pid, and its address without the token."""
        parts = urlsplit(self.url)
        where = f", serving http://{parts.netloc}/" if self.url else ""
        return f"`{self.command}` (pid {self.pid} since {self.started}{where})"


class Busy(UsageError):
    """Another control plane runs for the project."""


def path(project: Project) -> Path:
    return home.main_of(project).specd_dir / FILE


def private(project: Project) -> Path | None:
    """Where the plane's whole address (with its token) is kept: the user's state folder, one file a project; None
    without a HOME to keep it in."""
    try:
        state = Path.home() / ".local" / "state" / "specd" / "planes"
    except RuntimeError:
        return None
    root = str(home.main_of(project).root.resolve())
    return state / f"{hashlib.sha256(root.encode()).hexdigest()[:32]}.json"


def running(project: Project) -> Record | None:
    """The project's live control plane, or None (no record, or its process is gone). Its ``url`` carries the
    token when this user's state folder holds it for the same plane."""
    found = _read(path(project))
    if found is None or (found.host == _host() and not pid_alive(found.pid)):
        return None
    kept = private(project)
    whole = _read(kept) if kept is not None else None
    if whole is not None and whole.identity() == found.identity() and whole.url:
        return replace(found, url=whole.url)
    return found


class Claim:
    """``with Claim(project, "specd ui"):`` this process is the project's control plane; else ``Busy``."""

    def __init__(self, project: Project, command: str) -> None:
        self.main = home.main_of(project)
        self.record = Record(os.getpid(), command, now(), _host())
        self._lock: Any = None

    def __enter__(self) -> Claim:
        from filelock import FileLock, Timeout

        self.main.specd_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.main.specd_dir / LOCK), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise _busy(self.main, self.record.command) from None
        self._lock = lock
        try:
            _ignored(self.main)
            self._write()
        except BaseException:
            lock.release()
            raise
        os.environ[home.PLANE_ENV] = self.record.identity()  # every run started from now on says it is ours
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        os.environ.pop(home.PLANE_ENV, None)
        with contextlib.suppress(OSError):
            if (found := _read(path(self.main))) is not None and found.identity() == self.record.identity():
                path(self.main).unlink()
        kept = private(self.main)
        with contextlib.suppress(OSError):
            if kept is not None and (found := _read(kept)) is not None and found.identity() == self.record.identity():
                kept.unlink()
        self._lock.release()

    def serving(self, url: str) -> None:
        """The dashboard is listening: the record names its address."""
        self.record = replace(self.record, url=url)
        self._write()

    def _write(self) -> None:
        parts = urlsplit(self.record.url)
        shown = replace(self.record, url=f"{parts.scheme}://{parts.netloc}/" if self.record.url else "")
        atomic.write_json(path(self.main), asdict(shown))  # in the project, where every jail reads it: no token
        kept = private(self.main)
        if kept is None or not self.record.url:
            return
        kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Not through ``atomic``, which redacts every byte (the token is the point here): 0600 from its first
        # byte, and replaced whole.
        tmp = kept.with_name(f".{kept.name}.{os.getpid()}")
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
            json.dump(asdict(self.record), out)
        os.replace(tmp, kept)


def _busy(main: Project, command: str) -> Busy:
    found = running(main)
    who = found.text() if found else "another process (its record is being written)"
    stop = f"Ctrl-C where it runs, or `kill {found.pid}`" if found else "Ctrl-C where it runs"
    return Busy(f"a control plane already runs for {main.root}: {who}; `{command}` would be a second one, and "
                "one project has one",
                fix="use the one that runs (it starts every answered task; its address with the token is what "
                    f"it printed as it started), or stop it ({stop}) and start this again")


def _read(file: Path) -> Record | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return Record(**{k: data[k] for k in Record.__dataclass_fields__ if k in data})
    except (OSError, ValueError, RecursionError, TypeError):
        return None  # missing, half-written or not ours: no control plane is known


def _ignored(main: Project) -> None:
    """A project set up before the record existed gets it in its ignore file, once: it holds a token."""
    ignore = main.specd_dir / ".gitignore"
    with contextlib.suppress(OSError):
        text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
        if FILE not in text.splitlines():
            with ignore.open("a", encoding="utf-8") as handle:
                handle.write(("\n" if text and not text.endswith("\n") else "") + FILE + "\n")


def _host() -> str:
    return os.uname().nodename
