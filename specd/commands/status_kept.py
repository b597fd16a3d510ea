"""What `specd status` prints again without working it out, and what it keeps for next time: the piped text, the
JSON, and what rich drew on a terminal (the table, or one task), each while nothing it came from changes.

Imports only click at the top: a kept answer is printed before the pipeline, the run state or rich are loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project


def listing(project: Project, rows: list[dict[str, Any]], as_json: bool, before: Any,
            config: PipelineConfig | None, keep: list[Any], notes: list[str]) -> int:
    """Print the listing, piped (plain text) or --json, and keep what was printed while nothing changes."""
    from specd.commands.common import warning
    from specd.commands.terminal.plain import table
    from specd.redact import redact
    from specd.tasks import readmodel

    texts: dict[str, Any] = {"out": redact(table(rows)), "json": None, "err": [warning(note) for note in notes]}
    if as_json:
        from specd.commands.envelope import envelope
        from specd.tasks.readmodel.redaction import listing_json, redacted_list

        # only rows that may hold a secret are walked by redaction; a row a line
        texts["json"] = listing_json(envelope(None, tasks=redacted_list(rows)))
    click.echo(texts["json" if as_json else "out"])
    if len(keep) == len(rows):
        readmodel.remember_listing(project, before, config, keep, texts)
    return 0


def again(kept: dict[str, Any], form: str) -> bool:
    """Print what was kept in ``form``: the piped text, the JSON, or what was drawn on a terminal of this size (and
    with no warning beside it, which a terminal shows in colour); False when it does not fit."""
    if form == "drawn":
        from specd.tasks.readmodel.drawn import screen

        size, drawing = kept["drawn"]
        if kept["err"] or size != screen():
            return False
        sys.stdout.write(drawing)
        sys.stdout.flush()
        return True
    for line in kept["err"]:
        click.echo(line, err=True)
    click.echo(kept[form])
    return True


def draw_listing(project: Project, rows: list[dict[str, Any]], before: Any, config: PipelineConfig | None,
                 keep: list[Any], notes: list[str]) -> int:
    """Draw the listing's table on the terminal, and keep what was drawn (with the piped text, the same rows) for
    the next listing on a terminal of the same size, while nothing it came from changes."""
    from specd.commands.terminal.plain import table
    from specd.commands.terminal.status import render_tasks
    from specd.redact import redact
    from specd.tasks import readmodel
    from specd.tasks.readmodel.drawn import screen

    text = draw(lambda: render_tasks(rows, project.tasks_dir))
    if text is not None and len(keep) == len(rows) and not notes:  # a warning is drawn in colour beside it
        texts = {"out": redact(table(rows)), "json": None, "err": [], "drawn": [screen(), text]}
        readmodel.remember_listing(project, before, config, keep, texts)
    return 0


def draw(drawing: Callable[[], None]) -> str | None:
    """Draw what ``drawing`` draws on the terminal, redacted as rich's own printing is; what was written, or None
    when the terminal changed its size meanwhile (what was drawn would be kept for the wrong one)."""
    from specd.commands.terminal.console import out
    from specd.redact import redact
    from specd.tasks.readmodel.drawn import screen

    size = screen()
    console = out()
    with console.capture() as capture:
        drawing()
    text = redact(capture.get())
    console.file.write(text)
    console.file.flush()
    return text if screen() == size else None


def remember(project: Project, task: str, before: Any, config: PipelineConfig | None, data: dict[str, Any],
             notes: list[str], temporal: dict[str, str | None], *, placed: bool = False, drawn: str | None = None,
             ) -> None:
    """Keep what this answer prints, plain and --json, for the next `status TASK` whose inputs are the same.
    ``placed``: the answer was read from the task's worktree (its home), with ``config`` the pipeline there;
    ``drawn``: what a terminal was shown (kept for a terminal of this size, when no warning was shown beside it)."""
    from specd.commands.common import warning
    from specd.commands.envelope import document
    from specd.commands.terminal.plain import task_text
    from specd.executors.temporal import record
    from specd.redact import redact
    from specd.tasks import readmodel

    if not placed and placing(project, task):
        return
    if record.maybe_in_use(project, task, temporal):
        from specd.commands.temporal import settings_from

        if settings_from(project, temporal, task) is not None:
            return  # Temporal is configured: its workflows may hold the task's truth, which no file here shows
    texts = {"out": redact(task_text(data)), "json": document(task, **{k: v for k, v in data.items() if k != "task"}),
             "err": [warning(note) for note in notes]}
    if drawn is not None and not notes:
        from specd.tasks.readmodel.drawn import screen

        texts["drawn"] = [screen(), drawn]
    readmodel.remember_answer(project, task, before, config, texts)


def placing(project: Project, task: str) -> bool:
    """Whether the task's home is a worktree while its answer comes from the main tree: `specd run` is making that
    worktree. What ends that moment (the branch, the worktree) is watched by no kept answer, so none is kept."""
    from specd.errors import SpecdError
    from specd.tasks import home

    try:
        found = home.read(project, task)
    except SpecdError:
        return True
    return found is not None and found.kind == "worktree"
