"""Charts drawn on the server as SVG text: the pipeline with the run's position, the step timeline, cost over steps.

No script and no chart library on the page: a chart is a string the template inlines. Every label is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

BOX_W, BOX_H, GAP, ROW = 120, 34, 26, 64
COLOURS = {"done": "#2e7d32", "current": "#f9a825", "todo": "#90a4ae", "off": "#cfd8dc", "failed": "#c62828"}
OUTCOME_COLOURS = {"done": "#2e7d32", "failed": "#c62828", "skipped": "#90a4ae", "stop": "#f9a825"}

Shape = dict[str, list[tuple[str, str | None, bool]]]


def _text(x: float, y: float, label: str, **attrs: Any) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{escape(str(v))}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(label)}</text>'


def _clip(label: str, width: int = 16) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def pipeline(shape: Shape, position: dict[str, Any], done: set[tuple[str, str]]) -> str:
    """One row of boxes per pipeline, arrows between steps; the step the run is at is marked."""
    widest = max((len(steps) for steps in shape.values()), default=1)
    width, height = 150 + widest * (BOX_W + GAP), 20 + len(shape) * ROW
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" aria-label="pipeline">']
    for row, (name, steps) in enumerate(shape.items()):
        y = 10 + row * ROW
        parts.append(_text(4, y + BOX_H / 2 + 4, _clip(name, 18), font_size=12, font_weight="bold"))
        for i, (step, calls, enabled) in enumerate(steps):
            x = 140 + i * (BOX_W + GAP)
            here = position.get("pipeline") == name and position.get("step") == step
            state = "current" if here else "done" if (name, step) in done else "todo" if enabled else "off"
            if here and position.get("status") in ("FAILED", "BLOCKED"):
                state = "failed"
            dash = ' stroke-dasharray="4 3"' if not enabled else ""
            parts.append(f'<rect class="step {state}" data-step="{escape(step)}" x="{x}" y="{y}" width="{BOX_W}" '
                         f'height="{BOX_H}" rx="6" fill="{COLOURS[state]}" fill-opacity="0.25" '
                         f'stroke="{COLOURS[state]}" stroke-width="{3 if here else 1.5}"{dash}/>')
            label = _clip(step) + (" ▸" if calls else "")
            parts.append(_text(x + BOX_W / 2, y + 15, label, font_size=12, text_anchor="middle"))
            sub = f"→ {_clip(calls, 14)}" if calls else ("◀ here" if here else "")
            if sub:
                parts.append(_text(x + BOX_W / 2, y + 28, sub, font_size=10, text_anchor="middle", fill="#455a64"))
            if i:
                parts.append(f'<line x1="{x - GAP}" y1="{y + BOX_H / 2}" x2="{x - 3}" y2="{y + BOX_H / 2}" '
                             'stroke="#607d8b" stroke-width="1.5" marker-end="url(#arrow)"/>')
    parts.insert(1, '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
                    'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#607d8b"/></marker></defs>')
    parts.append("</svg>")
    return "".join(parts)


def timeline(steps: list[dict[str, Any]]) -> str:
    """A bar per finished step, its length the step's time, its colour the outcome."""
    if not steps:
        return ""
    longest = max(s["seconds"] for s in steps) or 1.0
    width, bar = 640, 420
    height = 10 + len(steps) * 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" aria-label="step timeline">']
    for i, s in enumerate(steps):
        y = 5 + i * 20
        w = max(2.0, bar * s["seconds"] / longest)
        colour = OUTCOME_COLOURS.get(str(s["outcome"]), "#1565c0")
        opacity = 0.35 if s["superseded"] else 0.85
        name = str(s["step"]) + (f" {s['phase']}" if s["phase"] else "") + (f" ({s['hook']})" if s["hook"] else "")
        parts.append(_text(2, y + 12, _clip(name, 22), font_size=11))
        parts.append(f'<rect x="150" y="{y + 2}" width="{w:.1f}" height="14" rx="3" fill="{colour}" '
                     f'fill-opacity="{opacity}"><title>{escape(name)}: {escape(s["took"])}, '
                     f'{escape(str(s["outcome"]))}</title></rect>')
        parts.append(_text(156 + w, y + 13, f"{s['took']}  {s['outcome']}", font_size=10, fill="#455a64"))
    parts.append("</svg>")
    return "".join(parts)


def cost(steps: list[dict[str, Any]]) -> str:
    """The run's cost after each step (a line), with each step's own cost as a bar under it."""
    if not steps:
        return ""
    total, points = 0.0, []
    for s in steps:
        total += 0.0 if s["superseded"] else s["cost"]
        points.append(total)
    top = max(points) or 1.0
    width, height, left, base = 640, 180, 60, 150
    step_x = (width - left - 20) / max(1, len(steps))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" aria-label="cost over steps">',
             f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#90a4ae"/>',
             _text(left - 4, 16, f"${top:.4f}", font_size=10, text_anchor="end"),
             _text(left - 4, base, "$0", font_size=10, text_anchor="end")]
    line = []
    for i, (s, value) in enumerate(zip(steps, points, strict=True)):
        x = left + step_x * (i + 0.5)
        own = (base - 12) * s["cost"] / top
        parts.append(f'<rect x="{x - step_x * 0.3:.1f}" y="{base - own:.1f}" width="{step_x * 0.6:.1f}" '
                     f'height="{own:.1f}" fill="#1565c0" fill-opacity="0.25"><title>{escape(str(s["step"]))}: '
                     f'${s["cost"]:.4f}</title></rect>')
        line.append(f"{x:.1f},{base - (base - 12) * value / top:.1f}")
    parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="#1565c0" stroke-width="2"/>')
    parts.append(_text(width - 10, height - 8, f"{len(steps)} steps, ${points[-1]:.4f}", font_size=10,
                       text_anchor="end"))
    parts.append("</svg>")
    return "".join(parts)
