"""The tasks page's rows: every task, from every place tasks run, as plain data (redacted as the page is rendered).

``SOURCES`` is the one list of where tasks come from. The local source reads the status index (so a project
of a thousand finished tasks lists in milliseconds) and covers tasks in the main tree and in `specd run`'s
worktrees; the Temporal source (``temporal_rows``) the tasks this clone submitted there. A source gives rows
of the same shape:
``task``, ``status`` and whatever of ``next``, ``waiting``, ``usage``, ``started_at``, ``updated_at``,
``running``, ``needs`` it knows, plus ``source`` naming where the task runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from specd.commands.terminal import graph as drawing
from specd.redact import redact
from specd.tasks import graph, idle
from specd.tasks.project import Project
from specd.tasks.status import all_status
from specd.web.temporal_rows import temporal_rows

Source = Callable[[Project], list[dict[str, Any]]]
WAIT_WORDS = {"gate": "approval at the gate", "outcome": "a decision on an outcome", "budget": "more budget",
              "max_visits": "a decision (max_visits)", "failure_cluster": "a decision on repeated failures",
              "secret": "a decision on a secret in a commit",
              "hidden": "a look at files hidden from git", "checks_failed": "a decision on failing checks",
              "no_phases": "phases in ROADMAP.md"}
# Waits that are failures a person must look at: shown red with their reason, never amber like a plain gate.
FAILING = ("failure_cluster", "checks_failed")
FAILED = ("BLOCKED", "FAILED", "ERROR")  # statuses whose reason is what went wrong


def local_rows(project: Project) -> list[dict[str, Any]]:
    rows = all_status(project)
    for row in rows:
        row["source"] = "worktree" if row.get("branch") else "local"
    return rows


SOURCES: list[Source] = [temporal_rows, local_rows]  # a task on Temporal is its workflow's, not this copy


def task_rows(project: Project, status: str | None = None) -> list[dict[str, Any]]:
    """Every task's display row, waiting ones first, then by name; ``status`` keeps only that status."""
    return [r for r in every_row(project) if status is None or r["status"] == status]


def every_row(project: Project) -> list[dict[str, Any]]:
    """Every task's display row, waiting ones first, then by name."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for source in SOURCES:
        for row in source(project):
            if row["task"] not in seen:  # the first source that knows a task speaks for it
                seen.add(row["task"])
                rows.append(row)
    graph.annotate(rows)
    shown = list(map(display, rows))
    shown.sort(key=lambda r: idle.attention(r["status"], r["task"]))
    return shown


def display(row: dict[str, Any]) -> dict[str, Any]:
    nxt = row.get("next") or {}
    usage = row.get("usage") or {}
    running = row.get("running") or {}
    wait = row.get("waiting") or {}
    failed = str(row.get("status")) in FAILED
    tokens = sum(int(v or 0) for k, v in usage.items() if k.endswith("tokens"))
    return {
        # never IN_PROGRESS for a task nothing runs: ANSWERED (the control plane starts it) or STOPPED
        "task": str(row["task"]), "status": idle.shown(str(row.get("status")), row.get("idle")),
        "saved_status": str(row.get("status")), "idle": row.get("idle"), "source": row.get("source", "local"),
        "step": nxt.get("step") or "", "phase": nxt.get("phase") or "", "stage": row.get("stage") or "",
        "waits": redact(WAIT_WORDS.get(str(wait.get("kind")), str(wait.get("kind"))) + f" before {wait.get('step')}"
                  if wait and not failed else ""),  # a failed step waits for nothing; its reason says why
        "elapsed": elapsed(row.get("started_at"), row.get("updated_at"), bool(running)),
        "tokens": tokens, "cost": float(usage.get("cost_usd") or 0),
        "activity": ago(running.get("last_activity_s")) if running else "",
        "needs": list(row.get("needs") or ()), "waits_for": list(row.get("waits_for") or ()),
        # free text, redacted before HTML escapes it (the page is redacted again as a whole)
        "reason": redact(str(row.get("reason") or "")), "branch": row.get("branch") or "",
        "ready": bool(row.get("ready", True)),
        "failing": wait.get("kind") in FAILING and str(row.get("status")) == "WAITING_FOR_HUMAN",
        "failed": failed,
    }


def summary(rows: list[dict[str, Any]], statuses: tuple[str, ...]) -> dict[str, Any]:
    """What the top of the tasks page says about all of them: a count per status, how many wait for a person
    (and how many of those because something failed), and what the project has spent."""
    counts = dict.fromkeys(statuses, 0)
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    waiting = [r for r in rows if r["status"] == "WAITING_FOR_HUMAN"]
    return {"counts": counts, "all": len(rows), "waiting": len(waiting),
            "failing": sum(1 for r in waiting if r["failing"]),
            "tokens": sum(r["tokens"] for r in rows), "cost_usd": round(sum(r["cost"] for r in rows), 6)}


def seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def elapsed(start: Any, end: Any, running: bool) -> str:
    begin = seconds(start)
    stop = time.time() if running else seconds(end)
    return duration(stop - begin) if begin is not None and stop is not None else ""


def duration(span: float) -> str:
    span = max(0.0, span)
    if span < 60:
        return f"{span:.1f} s" if span < 10 else f"{span:.0f} s"
    if span < 3600:
        return f"{span // 60:.0f} m {span % 60:02.0f} s"
    return f"{span // 3600:.0f} h {span % 3600 // 60:02.0f} m"


def ago(age: Any) -> str:
    return f"{duration(float(age))} ago" if isinstance(age, int | float) else ""


def graph_nodes(rows: list[dict[str, Any]]) -> list[dict[str, object]]:
    """The graph as `status --graph --json` gives it (a need naming no task is left out)."""
    known = {r["task"] for r in rows}
    edges = {r["task"]: tuple(n for n in r["needs"] if n in known) for r in rows}
    return drawing.nodes(edges, {r["task"]: r["status"] for r in rows})
