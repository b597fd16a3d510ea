"""Failure clusters: failures of one step with the same reason, once the parts that change are taken out.

A step that keeps failing the same way is one row that counts, not a list that grows with every retry:
the snapshot stays the same size however often it fails. A row is
{key, step, pipeline, phase, kind, first_seen, last_seen, count, last_note}; ``last_note`` is the last
full reason, ``key`` the normalised one.
"""

from __future__ import annotations

import re
from typing import Any

from specd.system.lazyre import lazy

MAX_CLUSTERS = 50  # distinct ways of failing kept; the oldest-seen goes first
MAX_NOTE = 2000  # a reason is a sentence or two; a pasted log is cut

# What differs between two runs of the same failure: times, dates, hex ids, paths with numbers, numbers.
_VOLATILE = (
    lazy(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"),
    lazy(r"\b\d{1,2}:\d\d(?::\d\d(?:\.\d+)?)?\b"),
    lazy(r"\S*/\S*\d\S*"),  # /tmp/run-1234/x, transcripts/20261123-0924/001.log
    # shas, run ids, addresses: six hex digits with a digit among them, or eight without one (a random id is
    # all letters once in 2,500; no English word of eight letters is spelt with a to f alone)
    lazy(r"\b(?:0x)?(?:(?=[0-9a-f]*\d)[0-9a-f]{6,}|[0-9a-f]{8,})\b", re.IGNORECASE),
    lazy(r"\d+(?:\.\d+)?"),
)
_SPACE = lazy(r"\s+")


def normalise(reason: str) -> str:
    """The reason with what changes between attempts replaced by `#`, whitespace collapsed, lower-cased."""
    text = reason[:MAX_NOTE]
    for pattern in _VOLATILE:
        text = pattern.sub("#", text)
    return _SPACE.sub(" ", text).strip().lower()


def record(clusters: list[dict[str, Any]], failure: dict[str, Any]) -> dict[str, Any]:
    """Count ``failure`` ({at, step, pipeline, phase, kind, reason}) into its cluster; returns that cluster."""
    at, step, pipeline, phase, kind = (_text(failure.get(k)) for k in ("at", "step", "pipeline", "phase", "kind"))
    reason = str(failure.get("reason") or "")
    key = normalise(reason)
    row = next((c for c in clusters if c.get("step") == step and c.get("key") == key), None)
    if row is None:
        row = {"key": key, "step": step, "first_seen": at, "count": 0}
        clusters.append(row)
    row.update(pipeline=pipeline or row.get("pipeline"), phase=phase, kind=kind, last_seen=at,
               last_note=_bounded(reason))
    row["count"] = int(row.get("count") or 0) + 1
    if len(clusters) > MAX_CLUSTERS:
        clusters.remove(min(clusters, key=lambda c: str(c.get("last_seen") or "")))
    return row


def _bounded(reason: str) -> str:
    """The reason's head (what failed) and tail (the output's last lines, where the cause usually is)."""
    if len(reason) <= MAX_NOTE:
        return reason
    half = MAX_NOTE // 2
    return f"{reason[:half]} [...] {reason[-half:]}"


def _text(value: Any) -> str | None:
    """Rows from an old or hand-edited file may hold anything; a cluster holds text, which decodes again."""
    return value if value is None or isinstance(value, str) else str(value)


def fold(failures: list[dict[str, Any]], clusters: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A state saved before clusters listed every failure; they fold into clusters in order."""
    out = list(clusters or [])
    for failure in failures:
        record(out, failure)
    return out
