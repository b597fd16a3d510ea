"""Render `pipeline show` and `hooks` for people."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from specd.commands.terminal.console import out

MAX_TREE_DEPTH = 40  # nested pipelines drawn; deeper chains are summarised (rich draws trees recursively)


def _hook_text(hook: dict[str, Any] | None) -> str:
    if not hook:
        return ""
    what = f"run: {hook['run']}" if hook.get("run") else hook["path"]
    flags = [hook["source"], hook["mode"]] + (["optional"] if hook.get("optional") else [])
    return f"{what} [dim]({', '.join(flags)})[/dim]"


def render_pipeline(view: dict[str, Any]) -> None:
    origin = "built-in default" if view["origin"] == "builtin" else "project file"
    tree = Tree(f"[bold]{view['source']}[/bold] ({origin}, schema {view['schema_version']}, "
                f"mode {view['mode']})")
    for point, hook in view["hooks"].items():
        if hook:
            tree.add(f"[magenta]{point}[/magenta] {_hook_text(hook)}")
    _add_pipeline(tree, view, "main", set())
    out().print(tree)


def _add_pipeline(parent: Tree, view: dict[str, Any], name: str, seen: set[str]) -> None:
    node = parent.add(f"[bold cyan]{name}[/bold cyan]")
    for step in view["pipelines"][name]:
        flags = [] if step["enabled"] else ["[red]disabled[/red]"]
        if step["pause_in_semi_auto"]:
            flags.append("pause")
        if step["foreach"]:
            flags.append(f"foreach {step['foreach']}")
        if step["outcomes"]:
            flags.append(", ".join(f"{k}→{v}" for k, v in step["outcomes"].items()))
        if step.get("when"):
            flags.append(f"when {escape(step['when'])}")
        if step.get("output"):
            flags.append("output: " + escape(", ".join(step["output"].get("properties") or {}) or "object"))
        if step.get("agent"):  # an agent per step (issue 30): say which backend, where it is not the run's
            flags.append("agent: " + escape(step["backend"]))
        suffix = f" [dim]({'; '.join(flags)})[/dim]" if flags else ""
        if step["pipeline"]:
            child = node.add(f"{step['name']} → pipeline {step['pipeline']}{suffix}")
            if len(seen) >= MAX_TREE_DEPTH:
                child.add(f"[dim]… nested deeper than {MAX_TREE_DEPTH} pipelines; `specd pipeline show --json` "
                          "lists them all[/dim]")
            elif step["pipeline"] not in seen:
                _add_pipeline(child, view, step["pipeline"], seen | {name})
            continue
        child = node.add(f"[green]{step['name']}[/green] {step['workflow_path']} "
                         f"[dim]({step['workflow_origin']})[/dim]{suffix}")
        for point, hook in (step.get("hooks") or {}).items():
            if hook:
                child.add(f"[magenta]{point}[/magenta] {_hook_text(hook)}")
        if step.get("checks"):
            child.add(f"[magenta]checks:[/magenta] {escape(' && '.join(c['run'] for c in step['checks']))} "
                      f"[dim]({step['attempts']} attempts)[/dim]")


def render_hooks(rows: list[dict[str, Any]]) -> None:
    table = Table("pipeline", "step", "point", "hook", "source", "mode", "optional")
    for row in rows:
        if row["status"] == "disabled":
            table.add_row(row["pipeline"], row["step"], row["point"], "[dim]step disabled[/dim]", "", "", "")
            continue
        table.add_row(row["pipeline"], row["step"], row["point"], row["hook"] or "[dim]-[/dim]",
                      row["source"] or "", row["mode"] or "",
                      "yes" if row["optional"] else ("no" if row["hook"] else ""))
    out().print(table)
