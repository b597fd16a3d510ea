"""A failed step or hook: counted into its failure cluster, then a stop that says what to do.

One failure is BLOCKED: fix the cause, `specd continue` retries it. The same failure again and again is
not something a plain retry will fix, so when a cluster reaches the retry limit the run holds for a
human instead (WAITING_FOR_HUMAN, exit 3): `continue` alone does not run it again, an answer does.
"""

from __future__ import annotations

import shlex
from typing import Any

from specd.state import clusters
from specd.state.model import Current, RunState, now

DEFAULT_RETRY_LIMIT = 3  # pipelines have no per-step retry setting yet; this is the limit for every step
HELD_KIND = "failure_cluster"


def failure_stop(state: RunState, cur: Current, reason: str, *, kind: str, task: str,
                 limit: int = DEFAULT_RETRY_LIMIT) -> tuple[str, str, dict[str, Any]]:
    """Record the failure; returns (status, reason, waiting) for the loop's Stop."""
    row = clusters.record(state.failure_clusters, {"at": now(), "step": cur.step, "pipeline": cur.pipeline,
                                                   "phase": cur.phase, "kind": kind, "reason": reason})
    wait: dict[str, Any] = {"kind": kind, "step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase}
    count = int(row["count"])
    if count % limit:  # after an answer, the step gets `limit` more tries before the next hold
        return "BLOCKED", reason + f"; fix the cause, then `specd continue {task}` retries it", wait
    name = shlex.quote(task)
    said = (f"{reason}; step {cur.step!r} has failed this way {count} times (retry limit {limit}), so it "
            f"waits for you: fix the cause, then `specd retry {name}` (or `specd approve {name}`) runs it again, "
            f"`specd skip {name}` goes on without it")
    return "WAITING_FOR_HUMAN", said, {**wait, "kind": HELD_KIND, "failed": kind, "count": count, "limit": limit}
