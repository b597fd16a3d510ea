"""A task's durable run state: a small snapshot, the finished rows, the markdown view, the heartbeat.

- ``.pipeline-state.json`` (version 2) holds everything but the history, plus
  ``history_len``; it is rewritten atomically only when it changed.
- ``.pipeline-state.history.jsonl`` holds the finished rows; a save appends only
  the new ones. So the cost of a save does not grow with the run.
- ``.pipeline-state.shape.json`` holds the step names per pipeline as the run last saw them (to re-plan
  after an edit); it changes only with the pipeline file, so it is written only then, not with every save.
- ``.pipeline-state.md`` is rendered by ``finish`` (the end of a run) or on demand.
A version-1 file (history inside) is read as it is and converted by the first save.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.redact import redact
from specd.state import atomic, decode, packing
from specd.state.history import HISTORY_FILE, HistoryFile
from specd.state.journal import Journal, seal_tail
from specd.state.model import RunState, now
from specd.state.packing import Shape
from specd.state.redacting import SnapshotRedactor
from specd.state.render import render_markdown
from specd.state.text import clean, escaped, scrub
from specd.system.ownfiles import open_own, read_regular

STATE_JSON = ".pipeline-state.json"
STATE_MD = ".pipeline-state.md"
SHAPE_JSON = ".pipeline-state.shape.json"
HEARTBEAT = ".heartbeat"
# Events `status` reads to explain a run (how it began, how it ended, why it could not save); the rest are
# written at once but not fsynced one by one: what finished is the history file's, which is.
DURABLE_EVENTS = frozenset({"run_started", "run_finished", "run_interrupted"})
_VOLATILE = ("updated_at", "heartbeat_at")  # change on every save; not a reason to write one
_GROWING = ("done", "visits")
Key = tuple[str, tuple[Any, ...]]


class StateStore:
    def __init__(self, task_dir: Path, task: str) -> None:
        self.task_dir = task_dir
        self.task = task
        self.json_path = task_dir / STATE_JSON
        self.md_path = task_dir / STATE_MD
        self.history_path = task_dir / HISTORY_FILE
        self.shape_path = task_dir / SHAPE_JSON
        self.heartbeat_path = task_dir / HEARTBEAT
        self.journal = Journal(task_dir / "events.jsonl", DURABLE_EVENTS)
        self.history = HistoryFile(self.history_path)
        self.budgets: dict[str, Any] = {}
        self._persisted = 0  # history rows already on disk (and counted by the snapshot)
        self._rewrite = True  # the history file must be written whole (fresh run, or migrated state)
        self._changed = False  # rows already on disk were changed in place (see history_changed)
        self._written: tuple[Key, Key | None] | None = None  # the last snapshot written: exact and loose keys
        self._loaded: tuple[Key, str, str] | None = None  # the snapshot the run began from, and its two times
        self._events_sealed = False
        self._listing = False  # loaded without history: must never be saved (it would drop the rows)
        self._redact = SnapshotRedactor()  # walks only what changed since the last save
        self._pack = packing.Packer()
        self._shape_file: Shape | None = None  # what the shape file holds as the current shape
        self._shape_disk: Shape | None = None  # the shape the snapshot on disk was packed against
        self._digest: tuple[Shape, str] | None = None
        self.saves = 0  # how many saves were asked for: the loop tells from it whether anything was saved since

    def load(self, *, with_history: bool = True) -> RunState | None:
        """The run state, or None before the first run. ``with_history=False`` skips the rows (listings)."""
        data = self._read_json()
        if data is None:
            return None
        try:
            version = decode.version_of(data)
            count = data.get("history_len", 0) if version >= 2 else None
            if count is not None and (type(count) is not int or count < 0):
                raise decode.Bad("history_len", "must be a whole number ≥ 0")
            rows = None if count is None else (self.history.read(count, snapshot=self.json_path)
                                               if with_history else [])
            shape = self._unpack(data) if "shape_digest" in data else None
            state = decode.decode(data, rows)
        except decode.Bad as bad:
            raise decode.error(self.json_path, bad) from None
        if shape is not None:  # version 3: the shape has its own file; older ones kept it inside
            state.shape = shape
        self._shape_disk = shape
        self._listing = not with_history
        if with_history:
            self._persisted = len(state.history)
            self._rewrite = count is None  # version 1: rows were inside the JSON; write them out once
            self._written = self._keys(state)
            self._loaded = (self._written[0], state.updated_at, state.heartbeat_at)
        return state

    def save(self, state: RunState, *, settled: bool = True, durable: bool = True) -> None:
        """Append the new history rows, then rewrite the snapshot if anything in it changed.

        ``settled=False`` (the save before a dispatch) leaves the folder unsynced: losing that rename to a
        power cut only means the interrupted step runs again, which it would anyway. ``durable=False`` syncs
        nothing (for a save a durable one follows at once); that one then syncs the rows written here."""
        if self._listing:
            raise RuntimeError("a state loaded with with_history=False cannot be saved")  # a bug, not bad input
        self.saves += 1
        rows = state.history
        appended = len(rows) != self._persisted
        # Rows removed or changed in place: the snapshot's smaller count goes first, so a kill between the
        # two writes leaves the old file's prefix, which is loadable (rows past the count are ignored).
        reshaped = not self._rewrite and (self._changed or len(rows) < self._persisted)
        if self._rewrite:  # fresh or migrated: the rows first, so the snapshot never counts rows not on disk
            self.history.rewrite(rows)
            self._rewrite = False
        elif appended and not reshaped:
            self.history.append(rows, self._persisted, durable=durable)
        if durable:
            self.history.sync()  # rows an earlier save wrote unsynced, before a snapshot that counts them
        self._persisted = len(rows)
        exact, loose = keys = self._keys(state)
        if not reshaped and self._written is not None and (exact == self._written[0] or (
                not appended and loose is not None and loose == self._written[1])):
            # Unchanged, or only stages that ran nothing were ticked off: re-running those on resume runs
            # nothing again, so they need no durable write.
            return
        if not reshaped and self._loaded is not None and exact == self._loaded[0]:
            # Back to the snapshot the run began from (a waiting task looked at again, still waiting, after the
            # run's IN_PROGRESS save): written as it was, times included, so the file is byte for byte what it
            # was and git has nothing to commit. The times say when the state last changed, not when it was
            # last looked at (`status` tells a live run by its lock and the heartbeat file, not by these).
            state.updated_at, state.heartbeat_at = self._loaded[1], self._loaded[2]
        else:
            state.updated_at = state.heartbeat_at = now()
        shape = self._shape_file
        if shape is None or state.shape != shape:  # first: the snapshot is packed against it (the old one is kept)
            atomic.write_json(self.shape_path, {"shape": state.shape, "previous": self._shape_disk},
                              sync_dir=settled, durable=durable)
            shape = self._shape_file = {name: list(steps) for name, steps in state.shape.items()}
        snapshot = _snapshot(state)
        snapshot["cursor"] = self._pack(snapshot["cursor"], shape)
        snapshot["shape_digest"] = self._digest_of(shape)
        atomic.write_flat(self.json_path, self._redact.texts({**snapshot, "history_len": len(rows)}),
                          sync_dir=settled, durable=durable)
        self._written, self._shape_disk = keys, self._shape_file
        if reshaped:
            self.history.rewrite(rows)
            self._changed = False
        if not self._events_sealed:
            seal_tail(self.journal.path)  # a run killed mid-append left a torn event line
            self._events_sealed = True

    def history_changed(self) -> None:
        """Rows already saved were changed in place (e.g. marked superseded): the next save writes them all."""
        self._changed = True

    def finish(self, state: RunState) -> None:
        """The end of a run: save, then render the markdown view once."""
        self.save(state)
        self.render(state)

    def render(self, state: RunState) -> None:
        """Written only when it reads differently: a run that changed nothing leaves the file (and git) alone."""
        text = clean(redact(render_markdown(state, self.budgets)))
        data = text.encode("utf-8")
        with contextlib.suppress(OSError):  # none yet, a link, a bigger file: written afresh
            if read_regular(self.md_path, len(data)) == data:
                return
        atomic.write_text(self.md_path, text, checked=True)

    def heartbeat_age(self) -> float | None:
        try:
            return max(0.0, time.time() - self.heartbeat_path.stat().st_mtime)
        except OSError:
            return None

    def _unpack(self, data: dict[str, Any]) -> Shape:
        """Unpack the cursor against the shape the snapshot names (the shape file's current or previous one)."""
        wanted, shapes = data["shape_digest"], self._read_shapes()
        self._shape_file = shapes[0] if shapes else None
        shape = next((s for s in shapes if s is not None and self._digest_of(s) == wanted), None)
        if shape is None:
            raise TaskError(f"{self.shape_path}: holds no pipeline shape with digest {wanted!r}, which "
                            f"{self.json_path.name} was saved against", fix=self._shape_fix())
        if isinstance(data.get("cursor"), list):
            data["cursor"] = [packing.unpack(f, shape, f"cursor[{i}]") for i, f in enumerate(data["cursor"])]
        return shape

    def _read_shapes(self) -> list[Shape | None]:
        try:
            text = self.shape_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskError(f"{self.shape_path}: cannot be read ({exc})", fix=self._shape_fix()) from None
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise decode.Bad("(top level)", "must be an object with `shape` and `previous`")
            return [None if data.get(k) is None else decode.shape_of(data[k]) for k in ("shape", "previous")]
        except (ValueError, RecursionError) as exc:
            raise TaskError(f"{self.shape_path}: invalid JSON ({exc})", fix=self._shape_fix()) from None
        except decode.Bad as bad:
            raise TaskError(f"{self.shape_path}: field {bad.where} {bad.expected}", fix=self._shape_fix()) from None

    def _digest_of(self, shape: Shape) -> str:
        if self._digest is None or self._digest[0] is not shape:
            self._digest = (shape, packing.digest(shape))
        return self._digest[1]

    def _shape_fix(self) -> str:
        return (f"restore it and {self.json_path.name} from git (`git checkout -- {self.task_dir}`), or move "
                f"{self.json_path.name} aside to start the task's run over")

    def _read_json(self) -> Any:
        try:
            text = self.json_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise self._unreadable(f"cannot be read ({exc})") from None
        try:
            data = json.loads(text)
            return scrub(data) if escaped(text) else data
        except json.JSONDecodeError as exc:
            raise self._unreadable(f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # a number over 4,300 digits; nesting thousands deep
            raise self._unreadable(f"invalid JSON ({str(exc) or 'nested too deeply'})") from None

    def _unreadable(self, what: str) -> TaskError:
        return TaskError(f"{self.json_path}: run state {what}",
                         fix=f"restore it from git, or move it aside to start the task's run over "
                             f"(`mv {shlex.quote(str(self.json_path))} {shlex.quote(f'{self.json_path}.bak')}`)")

    @staticmethod
    def _keys(state: RunState) -> tuple[Key, Key | None]:
        """What a save compares: exact, and loose (the current step's ticked-off stages left out)."""
        data = {k: v for k, v in _snapshot(state).items() if k not in _VOLATILE}
        data["history_len"] = len(state.history)
        # The cursor's done lists and visit counts grow by a step each time: compared as copies (at C speed),
        # not turned into sorted JSON at every save.
        data["cursor"] = [{k: v for k, v in frame.items() if k not in _GROWING} for frame in data["cursor"]]
        grown = tuple((tuple(frame.done), tuple(frame.visits), tuple(frame.visits.values())) for frame in state.cursor)
        exact = (json.dumps(data, sort_keys=True, default=str), grown)
        if data.get("current") is None:
            return exact, None
        data["current"] = {k: v for k, v in data["current"].items() if k != "completed"}
        return exact, (json.dumps(data, sort_keys=True, default=str), grown)


def _snapshot(state: RunState) -> dict[str, Any]:
    """Everything but the history, shallow: ``asdict`` deep-copies (the history, every visit count) on
    every save, which made a save's cost grow with the run. json.dumps reads the live objects instead."""
    data = {f.name: getattr(state, f.name) for f in fields(state) if f.name not in ("history", "shape")}
    data["cursor"] = [_shallow(frame) for frame in state.cursor]
    data["current"] = _shallow(state.current) if state.current else None
    return data


def _shallow(record: Any) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in fields(record)}


class Heartbeat:
    """Touches the heartbeat file while a step runs, so `status` can tell "stalled" from "slow"."""

    def __init__(self, path: Path, every: float | None = None) -> None:
        self.path = path
        self.every = every if every is not None else float(os.environ.get("SPECD_HEARTBEAT_SECONDS", "10"))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="specd-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self._touch()

    def _touch(self) -> None:
        """Never through a link: the file is not bound read-only in the jail (specd rewrites it while the agent
        runs), so the agent could have made it a link to a file of the user's."""
        with contextlib.suppress(OSError):  # a missed beat only makes status more cautious
            fd = open_own(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            try:
                os.write(fd, redact(f"{os.getpid()} {now()}\n").encode("utf-8"))  # cheap: no fsync
            finally:
                os.close(fd)
