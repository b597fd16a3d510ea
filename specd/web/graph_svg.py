"""The task graph drawn on the server as SVG: who needs whom, each task a box coloured by its status and linked
to its page.

Only tasks that take part in the graph (they need a task, or a task needs them) are drawn: a project of a
thousand unrelated tasks has no graph to show. A task's column is how deep its needs go, so every arrow points
right. The colour is never the only sign: each box says its status in words, and a legend names every colour
used. Text is dark on a light tint (contrast well above 4.5:1); the strong colour is the box's border.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import quote

BOX_W, BOX_H, COL, ROW, LEFT, TOP = 168, 40, 214, 52, 8, 8
MAX_NODES = 300  # beyond this the picture is no help; the table below lists every task
TEXT = "#1c2730"
# status → (border, fill); FAILING is a wait for a person because something failed, red like a failure
COLOURS = {
    "COMPLETE": ("#2e7d32", "#e3f1e4"), "IN_PROGRESS": ("#1565c0", "#e1ecf8"), "ANSWERED": ("#1565c0", "#e1ecf8"),
    "WAITING_FOR_HUMAN": ("#b26a00", "#fff3cd"), "FAILING": ("#c62828", "#fde7e7"),
    "BLOCKED": ("#c62828", "#fde7e7"), "FAILED": ("#c62828", "#fde7e7"), "ERROR": ("#c62828", "#fde7e7"),
    "ABORTED": ("#8d5a00", "#f6ead6"), "STOPPED": ("#6d4c41", "#efe9e6"),
    "NOT_STARTED": ("#546e7a", "#eceff1"), "CANCELLED": ("#546e7a", "#f4f4f4"),
}
WORDS = {"FAILING": "WAITING (failed)"}


def shade(row: dict[str, Any]) -> str:
    """The legend's key for a row: its status, or FAILING for a wait that a failure holds."""
    return "FAILING" if row.get("failing") else str(row["status"])


def members(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of tasks on some edge of the graph (a need naming no task draws no edge)."""
    rows = list(rows)
    known = {r["task"] for r in rows}
    needed = {n for r in rows for n in r["needs"] if n in known}
    return [r for r in rows if r["task"] in needed or any(n in known for n in r["needs"])]


def columns(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Each task's column: right of every task it needs (one more than the deepest), and, where what needs it
    allows, just left of the nearest. A cycle (the listing names it elsewhere) is cut where the walk meets it,
    so the page still draws."""
    needs = {r["task"]: [n for n in r["needs"] if n != r["task"]] for r in rows}
    depth: dict[str, int] = {}

    def walk(task: str, path: set[str]) -> int:
        if task in depth:
            return depth[task]
        path.add(task)
        deeper = [walk(n, path) for n in needs.get(task, ()) if n in needs and n not in path]
        path.discard(task)
        depth[task] = 1 + max(deeper) if deeper else 0
        return depth[task]

    for task in sorted(needs):
        walk(task, set())
    # A task is then moved as far right as what needs it allows: an arrow spanning columns would cross boxes.
    users: dict[str, list[str]] = {}
    for task, wanted in needs.items():
        for name in wanted:
            users.setdefault(name, []).append(task)
    for task in sorted(depth, key=lambda t: -depth[t]):
        later = [depth[u] for u in users.get(task, ()) if depth[u] > depth[task]]
        if later:
            depth[task] = max(depth[task], min(later) - 1)
    return depth


def draw(rows: list[dict[str, Any]]) -> str:
    """The graph as one ``<svg>`` element, or nothing when no task needs another."""
    drawn = members(rows)[:MAX_NODES]
    if not drawn:
        return ""
    column = columns(drawn)
    place: dict[str, tuple[int, int]] = {}
    height_of: dict[int, int] = {}
    for row in sorted(drawn, key=lambda r: (column[r["task"]], r["task"])):
        c = column[row["task"]]
        place[row["task"]] = (LEFT + c * COL, TOP + height_of.get(c, 0) * ROW)
        height_of[c] = height_of.get(c, 0) + 1
    width = LEFT * 2 + (max(column.values()) + 1) * COL
    height = TOP * 2 + max(height_of.values()) * ROW
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="graph-svg" class="chart" role="group" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-label="task graph">',
             '<defs><marker id="needs-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
             'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#607d8b"/></marker></defs>']
    for row in drawn:  # arrows first, so boxes sit on top of them
        x, y = place[row["task"]]
        for need in row["needs"]:
            if need in place and need != row["task"]:
                nx, ny = place[need]
                parts.append(f'<line class="need" x1="{nx + BOX_W}" y1="{ny + BOX_H / 2}" x2="{x - 3}" '
                             f'y2="{y + BOX_H / 2}" stroke="#607d8b" stroke-width="1.5" '
                             'marker-end="url(#needs-arrow)"/>')
    for row in drawn:
        parts.append(_node(row, *place[row["task"]]))
    parts.append("</svg>")
    return "".join(parts)


def _node(row: dict[str, Any], x: int, y: int) -> str:
    task, key = str(row["task"]), shade(row)
    border, fill = COLOURS.get(key, COLOURS["NOT_STARTED"])
    label = task if len(task) <= 22 else task[:21] + "…"
    said = WORDS.get(key, key)
    return (f'<a class="node" href="/tasks/{escape(quote(task, safe=""))}" data-task="{escape(task)}" '
            f'data-status="{escape(key)}"><title>{escape(task)}: {escape(said)}</title>'
            f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{fill}" stroke="{border}" '
            f'stroke-width="2"/>'
            f'<text x="{x + 8}" y="{y + 16}" font-size="12" font-weight="600" fill="{TEXT}">{escape(label)}</text>'
            f'<text x="{x + 8}" y="{y + 31}" font-size="11" fill="{TEXT}">{escape(said.lower())}</text></a>')


def legend(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The colours the drawn graph uses, each with its status in words (the page renders it as HTML)."""
    used = {shade(r) for r in members(rows)[:MAX_NODES]}
    return [{"status": key, "words": WORDS.get(key, key).lower(), "border": border, "fill": fill, "text": TEXT}
            for key, (border, fill) in COLOURS.items() if key in used]
