"""`specd status` rows as plain aligned text: what a pipe gets, without importing rich."""

from __future__ import annotations

import json
from typing import Any

from specd.state.checkpoint import line as checkpoint_line
from specd.system.visible import visible
from specd.tasks import idle

HEADER = ("task", "status", "needs", "ready", "next step", "phase", "cost", "updated")


def cells(row: dict[str, Any]) -> tuple[str, ...]:
    nxt = row.get("next") or {}
    cost = (row.get("usage") or {}).get("cost_usd")
    task = str(row["task"]) + (f" ({row['branch']})" if row.get("branch") else "")  # running in its worktree
    status = idle.shown(str(row["status"]), row.get("idle"))  # never IN_PROGRESS for a task nothing runs
    return (task, status, ", ".join(row.get("needs") or ()) or "-", _ready(row),
            str(nxt.get("step") or "-"), str(nxt.get("phase") or "-"),
            f"${cost:.4f}" if isinstance(cost, int | float) and cost else "-", str(row.get("updated_at") or "-"))


def _ready(row: dict[str, Any]) -> str:
    if "ready" not in row or row.get("status") == "ERROR":  # a task whose files do not load is ready for nothing
        return "-"
    return "yes" if row["ready"] else "waits for " + ", ".join(row.get("waits_for") or ())


# Columns a table never cuts: what a person scans the list for. The others are free text: they give way first
# (cut short), then whole columns drop, in this order, until the kept ones fit whole.
WHOLE = ("task", "status", "cost")
DROPS = ("updated", "needs", "ready", "phase", "next step")
FREE_MIN = 8  # a free-text column narrower than this says nothing: drop it instead
def by_attention(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Waiting tasks first, as on the page (tasks/idle.py); an idle task as the page names it."""
    return sorted(rows, key=lambda r: idle.attention(idle.shown(str(r.get("status")), r.get("idle")),
                                                      str(r.get("task"))))


def columns(lines: list[tuple[str, ...]], width: int | None, gap: int) -> list[int]:
    """The header columns to show within ``width`` (None: no limit), each column costing ``gap`` besides its
    text: every WHOLE column at full width, free ones at FREE_MIN at least, dropping them in DROPS order."""
    natural = [max(map(len, column)) for column in zip(*lines, strict=True)]
    shown = list(range(len(HEADER)))

    def need() -> int:
        return sum(natural[i] if HEADER[i] in WHOLE else min(natural[i], FREE_MIN) for i in shown) \
            + gap * len(shown)

    for name in DROPS:
        if width is None or need() <= width:
            break
        shown.remove(HEADER.index(name))
    return shown


def table(rows: list[dict[str, Any]], width: int | None = None) -> str:
    """Aligned plain text, waiting tasks first; with ``width``, free text is cut and columns drop before a
    task's name, status or cost is ever cut."""
    lines = [HEADER, *map(cells, by_attention(rows))]
    shown = columns(lines, width, 2)
    widths = {i: max(len(line[i]) for line in lines) for i in shown}
    if width is not None:
        over = sum(widths.values()) + 2 * (len(shown) - 1) - width
        for i in sorted((i for i in shown if HEADER[i] not in WHOLE), key=lambda i: -widths[i]):
            if over <= 0:
                break
            cut = min(over, widths[i] - FREE_MIN)
            if cut > 0:
                widths[i] -= cut
                over -= cut
    line = "  ".join(f"{{:<{widths[i]}}}" for i in shown)  # one format per line: 10,000 rows print in a blink
    # what agents said is in it: shown, never able to drive the terminal (``visible``)
    return visible("\n".join(line.format(*(fit(cell[i], widths[i]) for i in shown)).rstrip() for cell in lines))


def fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def checkpoint_lines(view: dict[str, Any]) -> list[str]:
    """The human answers the view holds (the last ten), each with who gave it and from where."""
    rows = [row for row in view.get("checkpoints") or [] if isinstance(row, dict)]
    return ["  checkpoints:", *(f"    {checkpoint_line(row)}" for row in rows)] if rows else []


def output_lines(history: list[dict[str, Any]]) -> list[str]:
    """Each step's typed output (issue 30), what later steps read as steps.NAME.output; long ones are cut."""
    lines = []
    for entry in history:
        if entry.get("kind") == "step" and entry.get("output") is not None and not entry.get("superseded"):
            shown = json.dumps(entry["output"], ensure_ascii=False)
            lines.append(f"  output of {entry['step']}: {shown if len(shown) <= 160 else shown[:159] + '…'}")
    return lines

def cut(text: str | None, width: int) -> str:
    """A summary's first line, at most ``width`` characters: a table's cell, or the line after a step's tick. (A
    group's summary goes on with a line per member; its members' own rows show those.)"""
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: width - 1] + "…"


def in_group(entry: dict[str, Any]) -> str:
    """A parallel group's rows (issue 30): a member says its group; the group lists its members' outcomes."""
    if entry.get("group"):
        return f" (in {entry['group']})"
    members = entry.get("members")
    return f" (of {', '.join(f'{k}: {v}' for k, v in members.items())})" if isinstance(members, dict) else ""


def checks_lines(view: dict[str, Any]) -> list[str]:
    """The latest round of a step's checks (`checks:`): attempt n of N and what the round found."""
    checks = view.get("checks")
    if not isinstance(checks, dict):
        return []
    return [f"  checks: attempt {checks.get('attempt')} of {checks.get('of')} of {checks.get('step')}: "
            f"{checks.get('summary')}"]


def phase_list(ids: list[str] | None, shown: int = 12) -> str:
    """The phases as `status TASK` names them: every one when few, else the first and the last few and how many
    (a roadmap the agent wrote may list thousands, which would make one line of megabytes)."""
    ids = ids or []
    if len(ids) <= shown:
        return ", ".join(ids) or "-"
    return f"{', '.join(ids[:shown - 4])}, …, {', '.join(ids[-3:])} ({len(ids):,} phases)"


def task_text(view: dict[str, Any]) -> str:
    """One task in detail, as plain lines: what `specd status TASK` prints into a pipe (no rich to import)."""
    nxt = view.get("next") or {}
    of = view.get("progress")
    status = idle.shown(str(view["status"]), view.get("idle"))  # as the listing and the terminal name it
    lines = [f"{view['task']}  {status}  stage {view.get('stage') or '-'}"]
    lines += [f"  {view[key]}" for key in ("reason", "status_note") if view.get(key)]
    lines.append(f"  next: {f'step {of[0]} of {of[1]}: ' if of else ''}{nxt.get('step') or '-'} "
                 f"(phase {nxt.get('phase') or '-'})   phases: {phase_list(view.get('phases'))}")
    for i, entry in enumerate(view.get("history") or [], 1):
        usage = entry.get("usage") or {}
        tokens = sum(v for k, v in usage.items() if k.endswith("tokens"))
        name = entry["step"] + (f" ({entry['hook']})" if entry.get("hook") else "") + in_group(entry)
        outcome = entry["outcome"] + (" (superseded)" if entry.get("superseded") else "")
        kind = entry["kind"] + (f" on {entry['backend']}" if entry.get("backend") else "")  # an agent per step
        lines.append(f"  {i:>4}  {name}  {entry.get('phase') or '-'}  {kind}  {outcome}  "
                     f"{tokens or '-'}  ${usage.get('cost_usd', 0):.4f}  {cut(entry.get('summary'), 60)}")
    lines += output_lines(view.get("history") or [])
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
    return visible("\n".join(lines))  # a summary, an output, a reason: none can drive the terminal
