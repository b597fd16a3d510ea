"""Where each task a run starts goes: its home settled and its tree made, for the tasks ready at once side by side.

A task in a worktree needs git processes, a copy of its folder and a commit before its run can start. Made one
after another on the executor's thread, twenty of them held the last task back by seconds, during which the
first ones ran: `specd run -j 20` then took one task's time plus that queue. Made side by side, a task waits for
the others only where git needs it to (``worktrees`` makes one worktree at a time).

What goes wrong for one task is its own: a home that refuses the run (Temporal's) or a need's branch that will not
merge comes back as that task's ``Placed.error``, and the other tasks start. Any other error stops the run, as it
did when the trees were made one by one.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from specd.errors import TaskError
from specd.executors import worktrees
from specd.tasks import home
from specd.tasks.project import Project

WORKERS = 4  # the trees made at once: git's processes wait on the disk as much as on the cores


@dataclass(frozen=True)
class Placed:
    task: str
    tree: Path | None = None
    here: bool = False  # the task lives in the user's own tree (its first run was `specd continue`)
    error: Exception | None = None  # a TaskError (the task is BROKEN), or a worktree's (it is BLOCKED)


def place(project: Project, task: str, needs: tuple[str, ...]) -> Placed:
    try:
        # A task first run by `specd continue` lives in the main tree: it goes on there, never copied.
        found = home.local(project, task, home.settle(project, task, home.worktree(task)))
        here = found.kind == "main"
        tree = in_main_tree(project, task, needs) if here else worktrees.prepare(project, task, needs)
    except (TaskError, worktrees.Conflict, worktrees.WorktreeError) as exc:
        return Placed(task, error=exc)
    return Placed(task, tree, here)


def place_all(project: Project, ready: list[tuple[str, tuple[str, ...]]]) -> Iterator[Placed]:
    """Each (task, its needs) placed, each given as soon as it is, so its run starts while others are made."""
    if len(ready) < 2:
        yield from (place(project, task, needs) for task, needs in ready)
        return
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(ready)), thread_name_prefix="specd-place") as pool:
        for done in as_completed([pool.submit(place, project, task, needs) for task, needs in ready]):
            yield done.result()


def in_main_tree(project: Project, task: str, needs: tuple[str, ...]) -> Path:
    """Where a task that lives in the user's own tree runs: there, as it is. specd never merges into that tree
    (the user's branch and index are theirs), so a need whose work is still on its own branch, not landed, is
    refused with the commands that bring it in; a need that ran in the main tree has its work there already."""
    missing = worktrees.unlanded(project, needs)
    if missing:
        lands = " && ".join(f"specd land {need}" for need in missing)
        raise worktrees.WorktreeError(
            f"{task} lives in your tree (its first run was `specd continue`) and needs {', '.join(missing)}, whose "
            f"work is on {', '.join(worktrees.branch(n) for n in missing)}, not in your tree; specd never merges "
            f"into your tree: `{lands}`, then `specd run {task}`")
    return project.root
