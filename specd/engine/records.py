"""What the loop writes besides the state: history entries, artifact hashes, CHANGELOG entries."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Any

from specd.agents.base import Usage
from specd.state import atomic
from specd.state.model import Current, now

SKIP_DIRS = {"transcripts"}


def snapshot(task_dir: Path) -> dict[str, str]:
    """sha256 of every task document, so a step's artifacts are the files it created or changed."""
    hashes: dict[str, str] = {}
    for path in sorted(task_dir.rglob("*")):
        rel = path.relative_to(task_dir)
        if not path.is_file() or rel.parts[0] in SKIP_DIRS or any(p.startswith(".") for p in rel.parts):
            continue
        if rel.name in ("events.jsonl", "config.json"):
            continue
        hashes[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


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
