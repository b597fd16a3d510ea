"""`specd status` rows as plain aligned text: what a pipe gets, without importing rich."""

from __future__ import annotations

from typing import Any

from specd.state.checkpoint import line as checkpoint_line

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
    lines = [HEADER, *map(cells, rows)]
    widths = [max(map(len, column)) for column in zip(*lines, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)  # one format per line: 10,000 rows print in a blink
    return "\n".join(line.format(*cells_of).rstrip() for cells_of in lines)


def checkpoint_lines(view: dict[str, Any]) -> list[str]:
    """The human answers the view holds (the last ten), each with who gave it and from where."""
    rows = [row for row in view.get("checkpoints") or [] if isinstance(row, dict)]
    return ["  checkpoints:", *(f"    {checkpoint_line(row)}" for row in rows)] if rows else []


def checks_lines(view: dict[str, Any]) -> list[str]:
    """The latest round of a step's checks (`checks:`): attempt n of N and what the round found."""
    checks = view.get("checks")
    if not isinstance(checks, dict):
        return []
    return [f"  checks: attempt {checks.get('attempt')} of {checks.get('of')} of {checks.get('step')}: "
            f"{checks.get('summary')}"]


def task_text(view: dict[str, Any]) -> str:
    """One task in detail, as plain lines: what `specd status TASK` prints into a pipe (no rich to import)."""
    nxt = view.get("next") or {}
    of = view.get("progress")
    lines = [f"{view['task']}  {view['status']}  stage {view.get('stage') or '-'}"]
    lines += [f"  {view[key]}" for key in ("reason", "status_note") if view.get(key)]
    lines.append(f"  next: {f'step {of[0]} of {of[1]}: ' if of else ''}{nxt.get('step') or '-'} "
                 f"(phase {nxt.get('phase') or '-'})   phases: {', '.join(view.get('phases') or []) or '-'}")
    for i, entry in enumerate(view.get("history") or [], 1):
        usage = entry.get("usage") or {}
        tokens = sum(v for k, v in usage.items() if k.endswith("tokens"))
        name = entry["step"] + (f" ({entry['hook']})" if entry.get("hook") else "")
        outcome = entry["outcome"] + (" (superseded)" if entry.get("superseded") else "")
        lines.append(f"  {i:>4}  {name}  {entry.get('phase') or '-'}  {entry['kind']}  {outcome}  "
                     f"{tokens or '-'}  ${usage.get('cost_usd', 0):.4f}  {(entry.get('summary') or '')[:60]}")
    usage = view.get("usage") or {}
    if usage:
        lines.append(f"  run cost ${usage.get('cost_usd', 0):.4f}; tokens in {usage.get('input_tokens', 0)}, "
                     f"out {usage.get('output_tokens', 0)}, cache read {usage.get('cache_read_input_tokens', 0)}")
    lines += checks_lines(view)
    lines += checkpoint_lines(view)
    lines += [f"  note: {notice}" for notice in view.get("plan_notices") or []]
    plan = view.get("plan") or []
    if plan:
        lines.append("  remaining: " + " → ".join(p["step"] + (f" ({p['phase']})" if p.get("phase") else "")
                                                 for p in plan))
    if view.get("hint"):
        lines.append(f"  next: {view['hint']}")
    return "\n".join(lines)
