"""The paths a finished step or hook changed that are not committed yet, kept on disk until they are.

A hook's changes wait for the next commit, and a step's wait between its close and its commit. If
specd is killed meanwhile, only this journal (``<task>/.git-pending.json``) still says whose they
are: the next run commits them first, in a commit that names the step or hook that made them,
instead of mistaking them for the user's own edits.

The journal also keeps which of those paths the user had staged before the step: on recovery,
specd unstages what it staged itself (a kill between ``git add`` and ``git commit``) and only that.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from specd.state import atomic

NAME = ".git-pending.json"


@dataclass
class Pending:
    work: dict[str, str] = field(default_factory=dict)  # path → the step or hook that changed it
    user_staged: set[str] = field(default_factory=set)  # staged by the user before specd's step touched it

    def labels(self, paths: set[str]) -> list[str]:
        """Who made ``paths``, each once, in the order they finished."""
        return list(dict.fromkeys(label for path, label in self.work.items() if path in paths))


class Journal:
    def __init__(self, task_dir: Path) -> None:
        self.path = task_dir / NAME

    def load(self) -> Pending:
        """The journal as last written; empty when there is none or it cannot be read (then it is no help)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            work = {str(p): str(label) for p, label in dict(data.get("work") or {}).items()}
            return Pending(work, {str(p) for p in data.get("user_staged") or ()})
        except (OSError, ValueError, RecursionError, TypeError, AttributeError):
            return Pending()

    def save(self, pending: Pending) -> None:
        """Durable before the commit is tried: a kill right after this still finds the paths."""
        if not pending.work:
            self.clear()
            return
        # flat: json's C encoder; with an indent, a step's 200,000 paths took seconds and tens of MB to write
        atomic.write_json(self.path, {"work": pending.work,
                                      "user_staged": sorted(pending.user_staged & pending.work.keys())}, flat=True)

    def clear(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


def short_name(name: str) -> str:
    """A hook's name for a commit subject: a `run:` hook is named by its whole command."""
    name = " ".join(name.split())
    return name if len(name) <= 48 else name[:47] + "…"
