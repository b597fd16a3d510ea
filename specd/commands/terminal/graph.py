"""The task graph drawn for people: an indented tree in text, or Mermaid for a README or an issue."""

from __future__ import annotations

import re
from collections.abc import Mapping

from specd.tasks.graph import Graph, order, readiness

_MERMAID_CLASSES = {"COMPLETE": "done", "IN_PROGRESS": "running", "WAITING_FOR_HUMAN": "waiting",
                    "BLOCKED": "failed", "FAILED": "failed", "ABORTED": "running"}


# What a task in each status is, beside the graph: only a task nothing of its own holds can be "ready".
MARKS = {"COMPLETE": "done", "CANCELLED": "cancelled (`specd rerun` starts it again)",
         "FAILED": "failed (`specd retry` runs it again)", "BLOCKED": "blocked (`specd continue` tries again)",
         "WAITING_FOR_HUMAN": "waits for a person (`specd approve`)", "ABORTED": "interrupted (`specd continue`)",
         "ERROR": "its files do not load (`specd status TASK`)"}


def mark(graph: Graph, task: str, statuses: Mapping[str, str]) -> str:
    """``done``, ``ready``, ``waits for a, b``, or what holds the task itself (cancelled, failed, ...)."""
    status = statuses.get(task, "NOT_STARTED")
    if status in MARKS:
        return MARKS[status]
    state = readiness(graph, task, statuses)
    if not state.ready:
        return "waits for " + ", ".join(state.waiting_for)
    return "running or resumable" if status == "IN_PROGRESS" else "ready"


def nodes(graph: Graph, statuses: Mapping[str, str]) -> list[dict[str, object]]:
    """The graph as data, dependencies first: what `status --graph --json` prints."""
    return [{"task": task, "status": statuses.get(task, "NOT_STARTED"), "needs": list(graph.get(task, ())),
             "state": mark(graph, task, statuses)} for task in order(graph)]


def text(graph: Graph, statuses: Mapping[str, str]) -> str:
    """One line per task, dependencies first: ``b  IN_PROGRESS  needs a (COMPLETE)  ready``."""
    lines = []
    for task in order(graph):
        status = statuses.get(task, "NOT_STARTED")
        wanted = graph.get(task, ())
        needs = ", ".join(f"{name} ({statuses.get(name, 'NOT_STARTED')})" for name in wanted) or "-"
        lines.append((task, status, needs, mark(graph, task, statuses)))
    if not lines:
        return "no tasks"
    head = ("task", "status", "needs", "")
    widths = [max(len(line[i]) for line in (head, *lines)) for i in range(3)]
    return "\n".join("  ".join((t.ljust(widths[0]), s.ljust(widths[1]), n.ljust(widths[2]), m)).rstrip()
                     for t, s, n, m in (head, *lines))


def mermaid(graph: Graph, statuses: Mapping[str, str]) -> str:
    """``flowchart LR`` with an edge from each needed task to the task that needs it."""
    ids = {task: _node_id(task, index) for index, task in enumerate(order(graph))}
    lines = ["flowchart LR"]
    for task, node in ids.items():
        lines.append(f'    {node}["{task}<br/>{statuses.get(task, "NOT_STARTED")}"]')
    for task in ids:
        for name in graph.get(task, ()):
            lines.append(f"    {ids[name]} --> {ids[task]}")
    for css, style in (("done", "fill:#d4edda"), ("running", "fill:#fff3cd"), ("waiting", "fill:#cce5ff"),
                       ("failed", "fill:#f8d7da")):
        members = [ids[t] for t in ids if _MERMAID_CLASSES.get(statuses.get(t, "")) == css]
        if members:
            lines += [f"    classDef {css} {style}", f"    class {','.join(members)} {css}"]
    return "\n".join(lines)


def _node_id(task: str, index: int) -> str:
    # Mermaid ids cannot hold '.' or '-' safely; the label keeps the real name.
    return f"t{index}_{re.sub(r'[^A-Za-z0-9_]', '_', task)}"
