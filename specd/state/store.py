"""A task's durable files: the state JSON, its markdown twin, the journal, the heartbeat."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.redact import redact
from specd.state import atomic
from specd.state.journal import Journal
from specd.state.model import RunState, now
from specd.state.render import render_markdown

STATE_JSON = ".pipeline-state.json"
STATE_MD = ".pipeline-state.md"
HEARTBEAT = ".heartbeat"


class StateStore:
    def __init__(self, task_dir: Path, task: str) -> None:
        self.task_dir = task_dir
        self.task = task
        self.json_path = task_dir / STATE_JSON
        self.md_path = task_dir / STATE_MD
        self.heartbeat_path = task_dir / HEARTBEAT
        self.journal = Journal(task_dir / "events.jsonl")
        self.budgets: dict[str, Any] = {}

    def load(self) -> RunState | None:
        if not self.json_path.exists():
            return None
        try:
            data = json.loads(self.json_path.read_text(encoding="utf-8"))
            return RunState.from_dict(data)
        except (ValueError, TypeError, KeyError) as exc:
            raise TaskError(
                f"{self.json_path}: run state cannot be read ({exc})",
                fix=f"restore it from git, or move it aside to start the task's run over "
                    f"(`mv {self.json_path} {self.json_path}.bak`)",
            ) from None

    def save(self, state: RunState) -> None:
        state.updated_at = state.heartbeat_at = now()
        atomic.write_json(self.json_path, state.to_dict())
        atomic.write_text(self.md_path, render_markdown(state, self.budgets))

    def heartbeat_age(self) -> float | None:
        try:
            return max(0.0, time.time() - self.heartbeat_path.stat().st_mtime)
        except OSError:
            return None


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
        with contextlib.suppress(OSError):  # a missed beat only makes status more cautious
            self.path.write_text(redact(f"{os.getpid()} {now()}\n"), encoding="utf-8")  # cheap: no fsync
