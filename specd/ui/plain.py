"""`specd status` rows as plain aligned text: what a pipe gets, without importing rich."""

from __future__ import annotations

from typing import Any

HEADER = ("task", "status", "needs", "ready", "next step", "phase", "cost", "updated")


def cells(row: dict[str, Any]) -> tuple[str, ...]:
    nxt = row.get("next") or {}
    cost = (row.get("usage") or {}).get("cost_usd")
    task = str(row["task"]) + (f" ({row['branch']})" if row.get("branch") else "")  # running in its worktree
    return (task, str(row["status"]), ", ".join(row.get("needs") or ()) or "-", _ready(row),
            str(nxt.get("step") or "-"), str(nxt.get("phase") or "-"),
            f"${cost:.4f}" if isinstance(cost, int | float) and cost else "-", str(row.get("updated_at") or "-"))


def _ready(row: dict[str, Any]) -> str:
    if "ready" not in row:
        return "-"
    return "yes" if row["ready"] else "waits for " + ", ".join(row.get("waits_for") or ())


def table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER, *(cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines)
