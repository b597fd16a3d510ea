"""A task's log for people: the journal's events as lines, and the transcripts per step (following: follow.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specd.errors import SpecdError, UsageError, did_you_mean, listed
from specd.state.journal import record_of
from specd.state.model import RunState
from specd.tasks.project import Project


def line(event: dict[str, Any]) -> str:
    """One readable line per event; unknown kinds still show, as their JSON."""
    at = str(event.get("at", ""))[11:19]
    kind = event.get("kind", "?")
    where = str(event.get("step", "")) + (f" phase {event['phase']}" if event.get("phase") else "")
    text = {
        "run_started": lambda: f"run {event.get('run_id')} {'resumed' if event.get('resumed') else 'started'} "
                               f"(mode {event.get('mode')}, agent {event.get('agent')})",
        "step_started": lambda: f"▶ {where} (attempt {event.get('attempt', 1)})",
        "step_finished": lambda: f"✔ {where} → {event.get('outcome')}  {event.get('summary') or ''}".rstrip(),
        "step_skipped": lambda: f"– {where} skipped ({event.get('reason')})",
        "hook_started": lambda: f"  hook {event.get('point')} {event.get('hook')} for {where}",
        "hook_finished": lambda: f"  hook {event.get('point')} {event.get('hook')} "
                                 + ("ok" if event.get("ok") else f"failed: {event.get('reason')}"),
        "checks_started": lambda: f"  checks of {where} (round {event.get('round')})",
        "checks_finished": lambda: f"  checks of {where} " + ("passed" if event.get("ok") else "failed"),
        "agent_tool": lambda: f"  → {event.get('tool')} {event.get('summary') or ''}".rstrip(),
        "gate": lambda: f"? gate before {where}",
        "notice": lambda: f"note: {event.get('message')}",
        "warning": lambda: f"warning: {event.get('message')}",
        "run_finished": lambda: f"run finished: {event.get('status')}" + (
            f" ({event['reason']})" if event.get("reason") else "") + (", waiting for its worker" if event.get(
                "parked") else ""),
        "run_parked": lambda: f"run {event.get('run_id')} waits for its worker to hand it the next step",
        "run_resumed": lambda: f"run {event.get('run_id')} goes on: its worker handed it the next step",
    }.get(kind)
    if text is None:
        rest = {k: v for k, v in event.items() if k not in ("at", "kind")}
        return f"{at} {kind} {json.dumps(rest, default=str)[:300]}"
    return f"{at} {text()}"


def matches(event: dict[str, Any], step: str | None) -> bool:
    return step is None or event.get("step") == step


def transcripts(task_dir: Path, state: RunState | None, step: str | None) -> list[tuple[dict[str, Any], Path]]:
    """(history row, transcript file) for every finished step (or only ``step``) that kept one."""
    found = []
    for row in (state.history if state else []):
        if row.get("transcript") and matches(row, step):
            path = Path(row["transcript"])
            found.append((row, path if path.is_absolute() else task_dir / path))
    return found


def read_events(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Whole lines from ``offset`` on, and the offset after the last whole line (a torn tail waits)."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    lines = data[:end].decode("utf-8", errors="replace").split("\n")  # "\n" alone ends a line (journal.py)
    return [event for line in lines if (event := record_of(line)) is not None], offset + end


def unread(path: Path, lines: list[int]) -> str:
    """What `specd logs` says of the journal's lines that are no whole event."""
    where = listed([str(line) for line in lines], 5)
    return (f"{path}: line{'s' if len(lines) > 1 else ''} {where} {'are' if len(lines) > 1 else 'is'} no whole "
            "event and not shown (a crash mid-write leaves one torn line; more were edited by hand or damaged); "
            "the other events are shown as recorded")


def check_step(project: Project, step: str, seen: list[str]) -> None:
    """An unknown step is a typo to name, not an empty log: the pipeline's steps and those the journal holds."""
    from specd.pipeline import load_pipeline

    try:
        config = load_pipeline(project)
        known = [s.name for steps in config.pipelines.values() for s in steps]
    except SpecdError:  # a broken pipeline file must not hide the log itself: the journal's steps still count
        known = []
    names = list(dict.fromkeys([*known, *(s for s in seen if s != "None")]))
    if step not in names:
        raise UsageError(f"no step {step!r} in this task's pipeline or log" + did_you_mean(step, names),
                         fix=f"name one of: {', '.join(names) or '(none yet)'}")
