"""`specd test --record TASK`: a case written from a run, so a real run becomes a regression test.

Each step row of the task's history (superseded rows left out) becomes a reply (its outcome, summary and
typed output) and a place in the expected path. The files a step changed are known by name only (the row
keeps their sha256), so the reply that first changed a file writes it with the text the task holds now:
enough to rebuild what routing reads (the roadmap, the phase folders), not a replay of every edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from specd.errors import TaskError
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import existing_task, read_config

ANSWERS = ("approve", "reject", "skip")
MAX_FILE = 64 * 1024  # a bigger document is left out of the case: routing never reads one that big


def record_case(project: Project, task: str) -> dict[str, Any]:
    """The case for ``task``'s run, as the test file's data."""
    folder = existing_task(project, task)
    state = StateStore(folder, task).load()
    if state is None or not state.history:
        raise TaskError(f"task {task!r} has no run to record", fix=f"run it first: `specd continue {task}`")
    if state.status not in ("COMPLETE", "WAITING_FOR_HUMAN", "BLOCKED", "FAILED"):
        raise TaskError(f"task {task!r} is {state.status}; a case is recorded from a run that has stopped",
                        fix=f"let the run stop (or `specd continue {task}`), then record it")
    rows = [row for row in state.history if row.get("kind") == "step" and not row.get("superseded")]
    written: set[str] = set()
    replies, path = [], []
    for row in rows:
        if row.get("outcome") == "skipped" or "members" in row:  # the loop's own doing: a skip, a group's combine
            path.append(_place(row))
            continue
        reply: dict[str, Any] = {"step": row["step"]}
        if row.get("phase"):
            reply["phase"] = str(row["phase"])
        if row.get("pipeline") and row["pipeline"] != "main":
            reply["pipeline"] = row["pipeline"]
        reply["outcome"] = row.get("outcome") or "done"
        if row.get("summary"):
            reply["summary"] = str(row["summary"])
        if row.get("output") is not None:
            reply["output"] = row["output"]
        files = _files(folder, row, written)
        if files:
            reply["files"] = files
        replies.append(reply)
        if not row.get("group"):  # a group's member is a reply, not a place: the group's row is the place
            path.append(_place(row))
    # A person's answers to held waits (checkpoint rows that say what the run waited for), in order.
    answered = [row for row in state.checkpoints if row.get("waiting") and row.get("answer") in ANSWERS]
    expect: dict[str, Any] = {"path": path, "status": state.status}
    if answered:
        expect["holds"] = [str(row["waiting"]) for row in answered]
    if state.status == "WAITING_FOR_HUMAN" and (state.waiting or {}).get("kind"):
        expect["waiting"] = str((state.waiting or {})["kind"])
    case: dict[str, Any] = {"name": f"recorded from {task}",
                            "description": str(read_config(folder).get("description") or task), "steps": replies}
    if answered:
        case["answers"] = [f"{row['answer']}: {row['note']}" if row.get("note") else str(row["answer"])
                           for row in answered]
    return {"schema_version": "1.0", "cases": [{**case, "expect": expect}]}


def write_case(project: Project, task: str, *, force: bool = False) -> Path:
    """Write ``.specd/tests/<task>.yaml``; an existing file is kept unless ``force``."""
    target = project.specd_dir / "tests" / f"{task}.yaml"
    if target.exists() and not force:
        raise TaskError(f"{target} already exists", fix=f"`specd test --record {task} --force` replaces it")
    data = record_case(project, task)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = f"# Recorded by `specd test --record {task}`: the path its run took, replayed without tokens.\n"
    target.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100),
                      encoding="utf-8")
    return target


def _place(row: dict[str, Any]) -> dict[str, str]:
    where = f"{row['step']}@{row['phase']}" if row.get("phase") else str(row["step"])
    return {where: str(row.get("outcome") or "done")}


def _files(folder: Path, row: dict[str, Any], written: set[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for artifact in row.get("artifacts") or []:
        relpath = str(artifact.get("path", ""))
        source = folder / relpath
        if not relpath or relpath in written or not source.is_file() or source.stat().st_size > MAX_FILE:
            continue
        try:
            files[relpath] = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not text: a case carries documents, not binaries
        written.add(relpath)
    return files
