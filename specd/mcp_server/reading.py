"""What the reading tools answer: the task listing, one task, and a task's log, each as the matching `--json` verb's
envelope and a short text for people.

Everything passes through redaction before it leaves: an agent's transcript may hold a secret it printed.
"""

from __future__ import annotations

from typing import Any

from specd.commands.terminal.plain import by_attention, table, task_text
from specd.redact import redact, redact_obj
from specd.state.store import StateStore
from specd.tasks import graph
from specd.tasks import logs as log
from specd.tasks.locate import branch, locate
from specd.tasks.project import Project
from specd.tasks.secrets import load_project_secrets
from specd.tasks.status import all_status, pipeline_or_problem, project_notes, task_status
from specd.tasks.task import existing_task

Answer = tuple[dict[str, Any], str]
MAX_EVENTS = 300  # the newest events of a log; the rest is one `specd logs TASK` away
MAX_TRANSCRIPT = 100_000  # characters of each transcript's end


def envelope(task: str | None, **changed: Any) -> dict[str, Any]:
    """The `--json` envelope (schemas/envelope.schema.json), redacted."""
    return dict(redact_obj({"ok": True, "task": task, **changed, "error": None}))


def list_tasks(project: Project, args: dict[str, Any]) -> Answer:
    """`specd status --json`: every task's row, with the notes the terminal prints as warnings."""
    load_project_secrets(project.root)
    config, broken = pipeline_or_problem(project)
    rows = all_status(project, config, broken, full=True)
    from specd.commands.temporal import listing_on_temporal

    # a task on Temporal: what its workers pushed, corrected by its workflow (as `specd status` lists it)
    listing_on_temporal(project, rows, lambda where, name: task_status(where, name, broken=broken), {})
    problem = graph.annotate(rows)
    rows = by_attention(rows)  # what waits for a person first, as the terminal's table shows it
    wanted = str(args.get("status") or "").upper()
    if wanted:
        rows = [row for row in rows if wanted in (row["status"], str(row.get("idle") or "").upper())]
    notes = [*project_notes(project), *(n for n in (broken, problem) if n)]
    text = table(rows) if rows else f"no tasks{' ' + wanted if wanted else ''} (create one with `specd new NAME`)"
    return envelope(None, tasks=rows, notes=notes), redact("\n".join([text, *notes]))


def show_task(project: Project, args: dict[str, Any]) -> Answer:
    """`specd status TASK --json`: where it stands, the plan left, what it waits for, its cost and checkpoints."""
    task = args["task"]
    load_project_secrets(project.root)
    from specd.executors.temporal import record

    if record.maybe_in_use(project, task, {}):  # on Temporal: as `specd status TASK` shows it
        from specd.commands.temporal import status_on_temporal

        remote = status_on_temporal(project, task, lambda where: task_status(where, task), {})
        if remote is not None:
            return envelope(task, **{k: v for k, v in remote.items() if k != "task"}), redact(task_text(remote))
    where = locate(project, task)
    existing_task(where, task)  # an unknown name: the error with "did you mean"
    config, broken = pipeline_or_problem(where)
    view = task_status(where, task, config, broken=broken)
    if where != project:
        view["branch"] = branch(task)
    return envelope(task, **{k: v for k, v in view.items() if k != "task"}), redact(task_text(view))


def logs(project: Project, args: dict[str, Any]) -> Answer:
    """`specd logs TASK [--step STEP]`: the events (newest ``MAX_EVENTS``) and each step's transcript (its end)."""
    task, step = args["task"], args.get("step") or None
    load_project_secrets(project.root)
    where = locate(project, task)
    task_dir = existing_task(where, task)
    store = StateStore(task_dir, task)
    events = store.journal.read()
    if step is not None:
        log.check_step(where, step, [str(row.get("step")) for row in events])
    shown = [event for event in events if log.matches(event, step)][-MAX_EVENTS:]
    transcripts = []
    for row, path in log.transcripts(task_dir, store.load(), step):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            text = f"(transcript unreadable: {exc.strerror})"
        transcripts.append({"step": row.get("step"), "phase": row.get("phase"), "kind": row.get("kind"),
                            "outcome": row.get("outcome"), "path": str(path), "text": text[-MAX_TRANSCRIPT:]})
    lines = [log.line(event) for event in shown]
    for item in transcripts:
        lines += [f"\n--- {item['step']} ({item['kind']}, {item['outcome']}): {item['path']} ---", str(item["text"])]
    data = envelope(task, step=step, events=len(shown), lines=[log.line(e) for e in shown], records=shown,
                    transcripts=transcripts)
    return data, redact("\n".join(lines) or "(no events yet)")
