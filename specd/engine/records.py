"""What the loop writes besides the state: history entries, artifact hashes, CHANGELOG entries."""

from __future__ import annotations

import hashlib
import os
import time
from datetime import date
from pathlib import Path
from typing import Any

from specd.agents.base import Usage
from specd.state import atomic
from specd.state.model import Current, now
from specd.system.ownfiles import DEEPEST

SKIP_DIRS = {"transcripts"}  # a file per step: walking it made a step's cost grow with the run
SKIP_FILES = {"events.jsonl", "config.json"}
SETTLED_NS = 3_000_000_000  # a file changed this recently is read again (same-stat rewrites: git's "racy clean")
_seen: dict[str, tuple[tuple[int, int, int, int], str]] = {}  # path → (stat key, sha256), for files left alone


def snapshot(task_dir: Path) -> dict[str, str]:
    """sha256 of every task document, so a step's artifacts are the files it created or changed.

    The walk never enters ``transcripts/`` or a dot-folder (specd's own), and a file whose stat has not
    moved is not read again: a step's cost follows the task's documents, not the run's length."""
    hashes: dict[str, str] = {}
    _walk(str(task_dir), "", hashes)
    return dict(sorted(hashes.items()))


def _walk(folder: str, prefix: str, hashes: dict[str, str]) -> None:
    if prefix.count("/") > DEEPEST:
        return  # no document lives this deep; an agent's nesting of a thousand folders would exhaust the stack
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name in SKIP_FILES or (not prefix and name in SKIP_DIRS):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):  # as rglob: a linked folder is not entered
                _walk(entry.path, f"{prefix}{name}/", hashes)
            elif entry.is_file(follow_symlinks=True):
                hashes[prefix + name] = _digest(entry.path, entry.stat())
        except OSError:
            continue  # gone meanwhile, or unreadable: not an artifact


def _digest(path: str, st: os.stat_result) -> str:
    key = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    seen = _seen.get(path)
    if seen is not None and seen[0] == key:
        return seen[1]
    with open(path, "rb") as handle:  # noqa: PTH123 - a str path from scandir, on a hot path
        value = hashlib.file_digest(handle, "sha256").hexdigest()
    if time.time_ns() - st.st_ctime_ns > SETTLED_NS:
        _seen[path] = (key, value)
    return value


def artifacts(before: dict[str, str], task_dir: Path) -> list[dict[str, str]]:
    after = snapshot(task_dir)
    return [{"path": path, "sha256": digest} for path, digest in after.items() if before.get(path) != digest]


def entry(cur: Current, *, kind: str, outcome: str, summary: str = "", usage: Usage | None = None,
          hook: str | None = None, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase, "kind": kind, "outcome": outcome,
        "summary": summary, "visit": cur.visit, "attempt": cur.attempt,
        "started_at": cur.started_at, "finished_at": now(),
        "usage": (usage or Usage()).as_dict(),
    }
    if hook:
        record["hook"] = hook
    record.update(extra)
    return record


def changelog_hook_failure(task_dir: Path, *, hook: str, step: str, phase: str | None, reason: str) -> None:
    where = f"{step} (phase {phase})" if phase else step
    text = (f"\n### {date.today().isoformat()} — Hook failure\n\n"
            f"- **Hook:** {hook}\n- **Step:** {where}\n- **Reason:** {reason}\n"
            "- The hook is optional, so the run went on.\n")
    atomic.append_text(task_dir / "CHANGELOG.md", text)
