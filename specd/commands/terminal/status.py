"""Render `specd status` for people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.bar import Bar
from rich.markup import escape
from rich.table import Table

from specd.commands.terminal import plain
from specd.commands.terminal.console import out
from specd.tasks import idle

COLOURS = {"COMPLETE": "green", "IN_PROGRESS": "cyan", "WAITING_FOR_HUMAN": "yellow", "ABORTED": "yellow",
           "BLOCKED": "red", "FAILED": "red", "ERROR": "red", "NOT_STARTED": "dim", "CANCELLED": "dim",
           "ANSWERED": "cyan", "STOPPED": "yellow"}


def _status(row: dict[str, Any]) -> str:
    status = idle.shown(str(row["status"]), row.get("idle"))  # as the page names it
    colour = COLOURS.get(status, "white")
    return f"[{colour}]{status}[/{colour}]"


def _next(nxt: dict[str, Any] | None) -> tuple[str, str]:
    if not nxt:
        return "-", "-"
    return nxt["step"], nxt.get("phase") or "-"


def render_tasks(rows: list[dict[str, Any]], tasks_dir: Path) -> None:
    if not rows:
        out().print(f"no tasks in {tasks_dir}; create one with `specd new <task> --description \"...\"`")
        return
    console = out()
    ordered = plain.by_attention(rows)
    lines = [plain.HEADER, *map(plain.cells, ordered)]
    shown = plain.columns(lines, console.width - 1, 3)  # a column costs its padding and its rule besides its text
    table = Table()
    for i in shown:
        whole = plain.HEADER[i] in plain.WHOLE  # a name, status or cost is never cut: free text gives way
        table.add_column(plain.HEADER[i], no_wrap=True, overflow="ellipsis",
                         min_width=max(len(line[i]) for line in lines) if whole else None)
    for row, cell in zip(ordered, lines[1:], strict=True):
        table.add_row(*(_status(row) if i == 1 else escape(cell[i]) for i in shown))
    console.print(table)


def render_task(view: dict[str, Any], seconds: list[float] | None = None) -> None:
    """One task in detail; with ``seconds`` (each history row's time) and a terminal, a bar of time and of
    cost per step, so the slow and the dear steps stand out at a glance."""
    step, phase = _next(view.get("next"))
    out().print(f"[bold]{view['task']}[/bold]  {_status(view)}  stage {view.get('stage') or '-'}")
    for key in ("reason", "status_note"):
        if view.get(key):
            out().print(f"  {escape(view[key])}")
    of = view.get("progress")
    where = f"step {of[0]} of {of[1]}: " if of else ""
    out().print(f"  next: {where}{step} (phase {phase})   phases: {plain.phase_list(view.get('phases'))}")
    history = view.get("history") or []
    if history:
        bars = seconds is not None and len(seconds) == len(history) and out().is_terminal
        table = Table("#", "step", "phase", "kind", "outcome", "tokens", "cost",
                      *(("took", "time", "cost ") if bars else ()), "summary")
        longest = max(seconds or [0.0]) or 1.0
        dearest = max(float((h.get("usage") or {}).get("cost_usd") or 0) for h in history) or 1.0
        for i, entry in enumerate(history, 1):
            usage = entry.get("usage") or {}
            tokens = sum(v for k, v in usage.items() if k.endswith("tokens"))
            name = entry["step"] + (f" [dim]({escape(entry['hook'])})[/dim]" if entry.get("hook") else "")
            name += f"[dim]{escape(plain.in_group(entry))}[/dim]"  # a parallel group's rows (issue 30)
            outcome = entry["outcome"] + (" [dim](superseded)[/dim]" if entry.get("superseded") else "")
            pictures: tuple[Any, ...] = ()
            if bars and seconds is not None:
                took, cost = seconds[i - 1], float(usage.get("cost_usd") or 0)
                pictures = (f"{took:.1f} s", Bar(longest, 0, took, width=12, color="cyan"),
                            Bar(dearest, 0, cost, width=12, color="magenta"))
            kind = entry["kind"] + (f" [dim]on {escape(entry['backend'])}[/dim]" if entry.get("backend") else "")
            table.add_row(str(i), name, entry.get("phase") or "-", kind, outcome,
                          str(tokens or "-"), f"${usage.get('cost_usd', 0):.4f}", *pictures,
                          escape(plain.cut(entry.get("summary"), 60)))
        out().print(table)
        for line in plain.output_lines(history):
            out().print(escape(line))
    usage = view.get("usage") or {}
    if usage:
        out().print(f"  run cost ${usage.get('cost_usd', 0):.4f}; tokens in {usage.get('input_tokens', 0)}, "
                    f"out {usage.get('output_tokens', 0)}, cache read {usage.get('cache_read_input_tokens', 0)}")
    for text in [*plain.checks_lines(view), *plain.checkpoint_lines(view)]:
        out().print(escape(text))
    for notice in view.get("plan_notices") or []:
        out().print(f"  [blue]note:[/blue] {escape(notice)}")
    plan = view.get("plan") or []
    if plan:
        out().print("  remaining: " + " → ".join(
            p["step"] + (f" ({p['phase']})" if p.get("phase") else "") for p in plan))
    if view.get("hint"):
        out().print(f"  next: {escape(view['hint'])}")
