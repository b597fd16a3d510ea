"""What `specd run` shows: a live line per running task, a line when one finishes, waits or fails, a table."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from rich.live import Live
from rich.table import Table

from specd.commands.terminal.console import ShownConsole
from specd.redact import redact_obj
from specd.system.visible import visible

JAIL = "jail: "


class RunView:
    def __init__(self, *, as_json: bool) -> None:
        self.as_json = as_json
        self.console = ShownConsole(stderr=False, highlight=False)
        self.rows: dict[str, dict[str, Any]] = {}
        self.jails: set[str] = set()
        self.live: Live | None = None
        if not as_json and sys.stdout.isatty():
            # get_renderable: each refresh redraws the table, so elapsed times tick between events too
            self.live = Live(console=self.console, get_renderable=self._table, refresh_per_second=4,
                             transient=True)
            self.live.start()

    def __call__(self, task: str, event: dict[str, Any]) -> None:
        if self.as_json:
            print(json.dumps(redact_obj({"task": task, **event}), default=str), flush=True)
            return
        kind = event.get("kind")
        row = self.rows.setdefault(task, {"step": "", "tokens": 0, "cost": 0.0, "since": time.monotonic()})
        if kind == "task_started":
            row["since"] = time.monotonic()
            self._say(f"{task}: {event['notice']}" if event.get("notice") else
                      f"{task}: started in {event.get('worktree')}")
        elif kind == "step_started":
            row["step"] = event.get("step")
        elif kind == "step_finished":
            usage = event.get("usage") or {}
            row["tokens"] += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            row["cost"] += float(usage.get("cost_usd") or 0)
        elif kind == "task_finished":
            self.rows.pop(task, None)
            said = event.get("reason") and (event.get("status") != "COMPLETE" or event.get("elsewhere"))
            self._say(f"{task}: {event.get('status')}" + (f": {event.get('reason')}" if said else ""))
        elif kind == "task_elsewhere":  # another process has it: not touched, and the run waits for it
            self.rows.pop(task, None)
            self._say(f"{task}: {event.get('reason')}; this run waits for it")
        elif kind == "task_held":
            self._say(f"{task}: not started, waits for {', '.join(event.get('waiting_for') or [])}")
        elif kind == "notice":
            self._notice(task, str(event.get("message")))
        elif kind == "task_broken":
            self.rows.pop(task, None)
            why = "not run here" if event.get("refused") else "not run, its files do not load"  # refused: its home
            self._say(f"{task}: {why} (the others run): {event.get('reason')}")

    def _notice(self, task: str, message: str) -> None:
        """A task's notice. Every run's first says its jail, which twenty tasks of one machine share: said once,
        and again only for a task whose jail differs."""
        if not message.startswith(JAIL):
            self._say(f"{task}: {message}")
        elif message not in self.jails:
            self.jails.add(message)
            self._say(f"{message} ({task}; said again only for a task whose jail differs)")

    def _say(self, line: str) -> None:
        if self.live is not None:
            self.live.console.print(line, markup=False)
        else:
            print(visible(line), flush=True)

    def _table(self) -> Table:
        table = Table(box=None, show_header=False)
        now = time.monotonic()
        for task, row in list(self.rows.items()):  # the refresh thread reads while events arrive
            table.add_row(task, str(row["step"]), f"{now - row['since']:.0f}s", f"{row['tokens']} tok",
                          f"${row['cost']:.4f}")
        return table

    def close(self, results: list[Any]) -> None:
        if self.live is not None:
            self.live.stop()
        if self.as_json:
            for result in results:
                print(json.dumps({"task": result.task, "kind": "summary", "status": result.status,
                                  "waiting_for": list(result.waiting_for), "branch": result.branch,
                                  "home": result.home, "reason": result.reason, "elsewhere": result.elsewhere,
                                  "run_by": result.run_by, "bad_input": result.bad_input}), flush=True)
            return
        table = Table(title=None)
        for column in ("task", "status", "waits for", "branch"):
            table.add_column(column)
        for result in results:
            said = result.status != "COMPLETE" or result.elsewhere
            waits = ", ".join(result.waiting_for) or (result.reason if said else "")
            table.add_row(result.task, result.status, waits,
                          result.branch or ("(on Temporal)" if result.home == "temporal" else "(your tree)"))
        ShownConsole(width=None if sys.stdout.isatty() else 200).print(table)
