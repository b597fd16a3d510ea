"""What a piped or --json `specd status` listing printed, kept while no task and no shared input has changed.

A warm listing of 10,000 finished tasks took its rows from the status index (``status_index``), but still
loaded the pipeline, decoded the index, worked the task graph out and laid the table out again: a third of a
second beyond the `stat`s that tell whether any task changed. When every row was a finished task's row that the
index keeps, the text printed is kept too (``.specd/.cache/status/.listing.json``, beside the `status TASK`
answers of ``status_memo``; no task is named with a leading dot), and printed again while:
- the shared inputs are as they were (``status_memo.shared``: pipeline, config, workflows, hooks, built-ins,
  the environment and ``.env*`` files), and the tasks/, features/ and worktrees/ folders have the same times
  (a folder made, removed or renamed in them moves those);
- each task folder's signature (``status_marks``) still holds, and each folder there that was not a task
  still has the same times (a config.json made in it moves them).
A live, unfinished or broken task anywhere, a task in a worktree, or an input changed in the last moment,
and nothing is kept: the listing is worked out as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from specd import __version__
from specd.tasks import status_memo

if TYPE_CHECKING:
    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project

NAME = ".listing.json"
VERSION = f"{__version__} {sys.hexversion}"  # the task signatures hold Python's hash of ints (status_marks)
Before = tuple[int, str, list[tuple[str, status_memo.Mark]]]


def parents(project: Project) -> list[str]:
    """The folders tasks live in: tasks/, features/ and worktrees/; and homes/, which says which of them."""
    return [str(folder) for folder in (project.tasks_dir, project.features_dir, project.specd_dir / "worktrees",
                                       project.specd_dir / "homes")]


def inputs(project: Project) -> Before | None:
    """The marks of what every row shares, taken before the listing is worked out."""
    settled = time.time_ns() - status_memo.RACY_NS
    paths = parents(project)  # status_memo.shared appends the inputs every status answer shares
    if not status_memo.shared(project, paths):
        return None
    return settled, status_memo.environment(str(project.root)), [(path, status_memo.mark(path)) for path in paths]


def remember(project: Project, before: Before | None, config: PipelineConfig | None, kept: list[Any],
             texts: dict[str, Any]) -> None:
    """Keep ``texts`` when ``kept`` (``status_index.listing``'s ``keep``: each row's folder and signature) covers
    every row and nothing it came from changed in the last moment; otherwise forget what was kept."""
    memo = _memo(project, before, config, kept)
    if memo is None:
        forget(project)
    else:  # three lines, each checked before the next is decoded: a miss (a task added, say) decodes little
        status_memo.keep(project, NAME, [*memo, texts])


def _memo(project: Project, before: Before | None, config: PipelineConfig | None,
          kept: list[Any]) -> list[Any] | None:
    if before is None or config is None or not status_memo.named_plainly(config) or None in kept:
        return None
    settled, env, marks = before
    folders = {folder for folder, _ in kept}
    others = []  # folders there that are not tasks: one that gains a config.json becomes one
    here = dict(marks)
    for parent in parents(project):
        if here.get(parent) is None:
            continue
        try:
            with os.scandir(parent) as entries:
                found = [e.path for e in entries if e.path not in folders and e.is_dir()]
        except OSError:
            return None
        if found and parent.endswith("/worktrees"):
            return None  # a task may live in a worktree: `status` shows it from there, live
        others += found
    marks = marks + [(path, status_memo.mark(path)) for path in others]
    if not status_memo.settled_marks(marks, settled):
        return None
    return [{"version": VERSION, "env": env, "marks": marks}, kept]


def forget(project: Project) -> None:
    """Remove what was kept: a listing that cannot be kept makes the next lookup a failed open, not a decode."""
    with contextlib.suppress(OSError):
        (project.specd_dir / ".cache" / status_memo.FOLDER / NAME).unlink(missing_ok=True)


def lookup(root: str, as_json: bool) -> dict[str, Any] | None:
    """The kept texts (``out``, ``json``, ``err``) if every mark still holds and the one asked for (``json``
    or ``out``) was kept."""
    try:
        with open(f"{root}/.specd/.cache/{status_memo.FOLDER}/{NAME}", "rb") as file:  # noqa: PTH123
            head, folders, rest = file.read().split(b"\n", 2)
        data = json.loads(head)
        if data["version"] != VERSION or any(status_memo.mark(path) != kept for path, kept in data["marks"]):
            return None
        from specd.tasks.status_marks import still

        if not all(still(folder, sig) for folder, sig in json.loads(folders)):
            return None
        texts = json.loads(rest)
        text = texts["json" if as_json else "out"]
        if not isinstance(text, str) or not all(isinstance(x, str) for x in texts["err"]):
            return None
        if data["env"] != status_memo.environment(root):
            return None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # missing, damaged or of another shape: worked out afresh
    return {"out": texts["out"], "json": texts["json"], "err": list(texts["err"])}
