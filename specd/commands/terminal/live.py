"""Render the loop's events on the terminal as they happen, and the end-of-run summary."""

from __future__ import annotations

import time
from typing import Any

from rich.markup import escape
from rich.text import Text

from specd.commands.terminal import plain
from specd.commands.terminal.console import Spinner, err
from specd.events import Event


def _money(value: Any) -> str:
    return f"${float(value or 0):.4f}"


def _clip(text: str) -> str:
    return text if len(text) <= AGENT_LINE else text[: AGENT_LINE - 1] + "…"


class _StepLine:
    """Re-rendered by rich several times a second, so the elapsed time ticks."""

    def __init__(self, label: str) -> None:
        self.label, self.started, self.tokens, self.cost = label, time.monotonic(), 0, 0.0

    def __rich__(self) -> Text:
        took = time.monotonic() - self.started
        spent = f", {self.tokens:,} tokens, {_money(self.cost)}" if self.tokens else ""
        return Text(f"{self.label}  {took:.0f}s{spent}")


AGENT_LINE = 160  # characters of a tool call or of the agent's text shown in the verbose view


class LiveView:
    """Prints one line per step and hook; quiet mode keeps only warnings, failures and the summary.

    Verbose mode adds the agent's tool calls and the first line of its text as they arrive, for the
    backends that stream them; they print above the live step line, which keeps ticking.
    """

    def __init__(self, quiet: bool = False, verbose: bool = False) -> None:
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self.started = time.monotonic()
        self.step_started = self.started
        self.steps: list[str] = []
        self.task = ""
        self.line: _StepLine | None = None
        self.spinner: Spinner | None = None

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.kind == "usage" and self.line is not None:
            self.line.tokens += sum(int(v) for k, v in data.items() if k.endswith("tokens"))
            self.line.cost += float(data.get("cost_usd") or 0)
            return
        if event.kind in ("agent_tool", "agent_text"):
            if self.verbose:
                self._agent_line(event.kind, data)
            return
        handler = getattr(self, f"on_{event.kind}", None)
        if handler is None:
            return
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None
        handler(data)

    def _say(self, text: str, *, always: bool = False) -> None:
        if always or not self.quiet:
            err().print(text, highlight=False)

    def _agent_line(self, kind: str, d: dict[str, Any]) -> None:
        if kind == "agent_tool":
            shown = f"{d.get('tool')} {d.get('summary') or ''}".strip()
            self._say(f"  [cyan]↳[/cyan] {escape(_clip(shown))}")
            return
        lines = [line.strip() for line in str(d.get("text") or "").splitlines() if line.strip()]
        if lines:
            more = " …" if len(lines) > 1 else ""
            self._say(f"  [dim]│ {escape(_clip(lines[0]) + more)}[/dim]")

    def on_run_started(self, d: dict[str, Any]) -> None:
        self.task = d["task"]
        verb = "resuming" if d.get("resumed") else "starting"
        self._say(f"[bold]{verb}[/bold] {d['task']} (run {d['run_id']}, mode {d['mode']}, agent {d.get('agent')})")

    def on_step_started(self, d: dict[str, Any]) -> None:
        self.step_started = time.monotonic()
        phase = f" phase {d['phase']}" if d.get("phase") else ""
        attempt = f" (attempt {d['attempt']})" if d.get("attempt", 1) > 1 else ""
        of = f" (step {d['of'][0]} of {d['of'][1]})" if d.get("of") else ""
        label = f"{self.task}: {d['step']}{phase}{attempt} {of}"
        if self.quiet or not err().is_terminal:
            self._say(f"[cyan]▶[/cyan] {d['step']}{phase}{attempt}{of} …")
            return
        self.line = _StepLine(label)
        self.spinner = Spinner(self.line)
        self.spinner.start()

    def on_step_finished(self, d: dict[str, Any]) -> None:
        took = time.monotonic() - self.step_started
        usage = d.get("usage") or {}
        tokens = sum(v for k, v in usage.items() if k.endswith("tokens"))
        cost = f", {tokens} tokens, {_money(usage.get('cost_usd'))}" if tokens else ""
        phase = f" phase {d['phase']}" if d.get("phase") else ""
        self.steps.append(f"{d['step']}{phase} → {d['outcome']}")
        summary = str(d.get("summary") or "")
        self._say(f"[green]✔[/green] {d['step']}{phase} → [bold]{d['outcome']}[/bold] ({took:.1f}s{cost})"
                  + (f"  [dim]{escape(plain.cut(summary, 100))}[/dim]" if summary.strip() else ""))
        if d.get("members"):  # a parallel group: its summary goes on with a line per member
            for line in summary.strip().split("\n")[1:]:
                if line.startswith("- "):  # not the lines a member's own summary may go on with
                    self._say(f"    [dim]{escape(plain.cut(line, 100))}[/dim]")

    def on_step_skipped(self, d: dict[str, Any]) -> None:
        self._say(f"[dim]– {d['step']} skipped ({d['reason']})[/dim]")

    def on_hook_finished(self, d: dict[str, Any]) -> None:
        if d["ok"]:
            self._say(f"  [green]hook[/green] {d['point']} {escape(d['hook'])} ok")
            return
        kind = "optional hook" if d.get("optional") else "hook"
        colour = "yellow" if d.get("optional") else "red"
        self._say(f"  [{colour}]{kind} {d['point']} {escape(d['hook'])} failed: {escape(d['reason'])}[/{colour}]",
                  always=True)
        if d.get("output"):
            self._say(f"[dim]{escape(d['output'][-1500:])}[/dim]", always=True)

    def on_notice(self, d: dict[str, Any]) -> None:
        self._say(f"[blue]note:[/blue] {escape(d['message'])}")

    def on_warning(self, d: dict[str, Any]) -> None:
        self._say(f"[yellow]warning:[/yellow] {escape(d['message'])}", always=True)

    def on_run_finished(self, d: dict[str, Any]) -> None:
        took = time.monotonic() - self.started
        usage = d.get("usage") or {}
        colour = {"COMPLETE": "green", "WAITING_FOR_HUMAN": "yellow", "ABORTED": "yellow"}.get(d["status"], "red")
        self._say(f"\n[bold {colour}]{d['status']}[/bold {colour}] after {took:.1f}s, "
                  f"{len(self.steps)} steps this run, cost {_money(usage.get('cost_usd'))}", always=True)
        if d.get("reason"):
            self._say(f"  {escape(d['reason'])}", always=True)
        if d.get("hint"):
            self._say(f"  next: [bold]{escape(d['hint'])}[/bold]   (see: specd status {self.task})", always=True)
