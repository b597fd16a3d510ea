"""Following a running task: its journal's events and its agents' own output, as they are written.

Every backend already writes its transcript line by line while the step runs (``agents/lines.py`` for
`cmd:` agents and `run:` hooks, the stream-json for claude_code, the turn log for anthropic), redacted
and with each line capped. Following is reading those files from where we last stopped, woken by the
file system (``watchfiles``), not by a timer. A timeout wakes us now and then anyway: a run killed with
SIGKILL writes nothing, and only a look at its lock tells that it is gone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.agents import numbered
from specd.state.lock import TaskLock
from specd.tasks import transcript_text
from specd.tasks.logs import read_events

WAKE_MS = 1000  # the longest sleep without a file change: how late a killed run is noticed
CHUNK = 1 << 20  # bytes read from a transcript at a time: a burst of output is never held whole
SHOWN = 64 * 1024  # characters of one line printed; the transcript keeps the rest
LONGEST = 4 * CHUNK + 1024  # a line longer than this (claude's stream-json is capped at 4 MiB) is shown cut


@dataclass(frozen=True)
class Output:
    """A line an agent or hook printed, read from its transcript while it runs."""

    label: str  # the transcript's label: the step, or ``<step>-hook`` / ``<step>-<point>-hook``
    path: Path
    text: str

    def record(self) -> dict[str, Any]:
        return {"kind": "output", "step": self.label, "transcript": str(self.path), "text": self.text}

    def line(self) -> str:
        return f"  │ {self.text}"


@dataclass(frozen=True)
class Ended:
    """A step's or hook's transcript is complete (its finished event came)."""

    label: str
    path: Path

    def record(self) -> dict[str, Any]:
        return {"kind": "transcript", "step": self.label, "path": str(self.path)}

    def line(self) -> str:
        try:
            shown = self.path.relative_to(Path.cwd())
        except ValueError:
            shown = self.path
        return f"  └ {self.label} transcript: {shown}"


Item = dict[str, Any] | Output | Ended
Wait = Callable[[], None]  # blocks until something under the task folder changes (or a while has passed)


def label_of(path: Path) -> str:
    """``007-execute-pre-hook.log`` → ``execute-pre-hook``."""
    return path.stem.split("-", 1)[-1]


def belongs(label: str, step: str | None) -> bool:
    """The transcript is ``step``'s own, or one of its hooks' (``--step`` shows both)."""
    return step is None or label == step or (label.startswith(f"{step}-") and label.endswith("-hook"))


class _Tail:
    """One transcript, read from where we stopped; a line without its newline yet waits for it."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path, self.offset, self.held = path, offset, b""
        self.jsonl = path.suffix == ".jsonl"

    def lines(self, final: bool = False) -> Iterator[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                while chunk := handle.read(CHUNK):
                    self.offset += len(chunk)
                    *whole, self.held = (self.held + chunk).split(b"\n")
                    if len(self.held) > LONGEST:  # never hold more than one long line
                        whole, self.held = [*whole, self.held], b""
                    for raw in whole:
                        yield from self._text(raw)
        except OSError:
            return  # removed (`specd rerun` may clear a run folder): nothing more to read
        if final and self.held:
            held, self.held = self.held, b""
            yield from self._text(held)

    def _text(self, raw: bytes) -> list[str]:
        text = raw.decode("utf-8", errors="replace")
        shown = transcript_text.readable(text) if self.jsonl else [text]
        # A screen is no place for megabytes (a huge stream-json record that is not prose, a minified file).
        return [t if len(t) <= SHOWN else f"{t[:SHOWN]} [... {len(t) - SHOWN:,} characters cut ...]" for t in shown]


class Follower:
    """The events of ``journal`` and the output in ``transcripts/<run>/``, in the order they happened."""

    def __init__(self, task_dir: Path, journal: Path, run_id: str | None, live: bool) -> None:
        self.task_dir, self.journal, self.run_id = task_dir, journal, run_id
        self.offset = 0
        self.tails: dict[Path, _Tail] = {}
        self.closed: set[Path] = set()
        # What ended before we started is in `specd logs`, not news: only the newest transcript of a live run
        # (the step or hook being run now, or the one just before) is shown from its start.
        found = self._files()
        self.closed = set(found[:-1] if live else found)

    def items(self) -> Iterator[Item]:
        events, self.offset = read_events(self.journal, self.offset)
        for event in events:
            kind = event.get("kind")
            if kind in ("step_finished", "hook_finished", "run_finished"):
                yield from self._end(event)  # the output a step printed comes before the line saying it ended
            yield event
            if kind == "run_started" and event.get("run_id"):
                self.run_id = str(event["run_id"])
        yield from self._outputs()

    def _outputs(self) -> Iterator[Item]:
        files = self._files()
        for number, path in enumerate(files, 1):
            tail = self.tails.setdefault(path, _Tail(path))
            if number < len(files):  # one task runs one step or hook at a time: a newer transcript ends this one
                yield from self._close(path)
                continue
            for text in tail.lines():
                yield Output(label_of(path), path, text)

    def _end(self, event: dict[str, Any]) -> Iterator[Item]:
        """The rest of each transcript the event closes (a last line with no newline), then where it is."""
        step, kind = str(event.get("step")), event.get("kind")
        for path in self._files():
            label = label_of(path)
            hook = label.endswith("-hook")
            if kind == "run_finished" or (belongs(label, step) and hook == (kind == "hook_finished")):
                yield from self._close(path)

    def _close(self, path: Path) -> Iterator[Item]:
        for text in (self.tails.pop(path, None) or _Tail(path)).lines(final=True):
            yield Output(label_of(path), path, text)
        self.closed.add(path)
        yield Ended(label_of(path), path)

    def _files(self) -> list[Path]:
        if not self.run_id:
            return []
        folder = self.task_dir / "transcripts" / self.run_id
        try:
            found = sorted((p for p in folder.iterdir() if p.suffix in (".log", ".jsonl")
                            and numbered.number(p.name) is not None), key=numbered.key)
        except OSError:
            return []
        return [p for p in found if p not in self.closed]


def live(task_dir: Path, run_id: str) -> dict[str, str | None]:
    """The transcript being written now (the newest of the run), and its Claude Code session if it has one."""
    try:
        found = [p for p in (task_dir / "transcripts" / run_id).iterdir() if numbered.number(p.name) is not None]
    except OSError:
        found = []
    if not found:
        return {"transcript": None, "session_id": None}
    newest = max(found, key=numbered.key)
    session = None
    if newest.suffix == ".jsonl":
        try:
            with newest.open(encoding="utf-8", errors="replace") as handle:
                first = json.loads(handle.readline(1 << 16) or "{}")  # claude_code's first line names its session
            session = first.get("session") if isinstance(first, dict) and first.get("type") == "specd" else None
        except (OSError, ValueError, RecursionError):
            session = None
    return {"transcript": str(newest), "session_id": session if isinstance(session, str) else None}


def follow(follower: Follower, lock: TaskLock, wait: Wait | None = None) -> Iterator[Item]:
    """Everything so far, then what comes, until no run holds the task's lock."""
    wait = wait or watcher(follower.task_dir)
    while True:
        running = lock.is_held()  # looked at before reading, so the last lines are never missed
        yield from follower.items()
        if not running:
            return
        wait()


def watcher(folder: Path) -> Wait:
    """A ``wait`` woken by any change under ``folder`` (the journal, a transcript, the lock's owner file)."""
    from watchfiles import watch  # only `logs -f` pays for it

    # debounce/step: a burst of writes is taken in one wake, yet a lone line is read within a few ms.
    changes = watch(folder, watch_filter=None, debounce=200, step=20, rust_timeout=WAKE_MS, yield_on_timeout=True)

    broken: list[bool] = []

    def wait() -> None:
        if broken:  # the watcher is gone: a look now and then is all that is left
            time.sleep(WAKE_MS / 1000)
            return
        try:
            if next(changes, None) is None:
                broken.append(True)
        except (OSError, RuntimeError):  # no watches left (inotify's limit), or the folder went
            broken.append(True)

    return wait
