"""`specd status` rows as plain aligned text: what a pipe gets, without importing rich."""

from __future__ import annotations

from typing import Any

HEADER = ("task", "status", "next step", "phase", "cost", "updated")


def cells(row: dict[str, Any]) -> tuple[str, ...]:
    nxt = row.get("next") or {}
    cost = (row.get("usage") or {}).get("cost_usd")
    return (str(row["task"]), str(row["status"]), str(nxt.get("step") or "-"), str(nxt.get("phase") or "-"),
            f"${cost:.4f}" if isinstance(cost, int | float) and cost else "-", str(row.get("updated_at") or "-"))


def table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER, *(cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines)
