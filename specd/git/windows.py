"""Steps of other specd runs that are open in this repository right now.

Runs of different tasks share one work tree. While run A's step is open, run B's agent may
write a file that A's snapshot then sees as changed. Each open step therefore leaves its
starting snapshot here (one file per process, under the repository's specd lock); a path that
another open step had in a different state when it began may be that step's work, and is left
to it unless this step's agent named the path as its own. A run's changes that wait for its next
commit (a hook's) are listed too, so no other run takes them meanwhile. A run with no step open
contests only those. Steps of runs in one tree also take turns (``shared_tree``); the windows are per
tree (its own git dir), since runs in other worktrees never change this tree's files.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from specd.git.tree import Snapshot
from specd.state import atomic
from specd.state.lock import pid_alive

PENDING = "<pending>"  # never a digest: every state of the path differs from it
OPEN = "<open>"  # a key no git path has: set when the window is an open step, not only pending changes
State = dict[str, str]  # path → digest at the step's start, for the paths dirty then


class Windows:
    def __init__(self, git_dir: Path) -> None:
        self.folder = git_dir / "specd-steps"
        self.mine = self.folder / f"{os.getpid()}.json"

    def publish(self, task: str, before: Snapshot | None, pending: set[str]) -> None:
        """This run's open step (if any) and its changes not yet committed (which no other run may take)."""
        if before is None and not pending:
            self.mine.unlink(missing_ok=True)
            return
        state = {p: e.digest for p, e in (before or {}).items()} | dict.fromkeys(pending, PENDING)
        if before is not None:
            state[OPEN] = OPEN
        # Not fsynced: only live processes read it, and none outlives a power cut.
        # flat: json's C encoder (see journal.save)
        atomic.write_json(self.mine, {"task": task, "before": state}, durable=False, flat=True)

    def others(self) -> list[State]:
        """The starting states of other live processes' open steps; leftovers of dead ones are removed."""
        states: list[State] = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            if path == self.mine:
                continue
            if not path.stem.isdigit() or not pid_alive(int(path.stem)):
                path.unlink(missing_ok=True)
                continue
            with contextlib.suppress(OSError, ValueError, AttributeError):
                states.append(dict(json.loads(path.read_text(encoding="utf-8")).get("before") or {}))
        return states


def contested(path: str, now: str | None, others: list[State]) -> bool:
    """Whether some other open step began with ``path`` in another state (so it may have changed it)."""
    # A run with only pending changes claims those paths, not every path it had clean.
    return any(state.get(path) != now if OPEN in state else path in state for state in others)
