"""The task graph: which tasks a task needs first (``depends_on`` in its config.json).

Checked whole before anything runs: a name that is no task, or a cycle, is bad input that names the
file and, for a cycle, its whole path, so the user sees which edge to remove.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.errors import SpecdError, TaskError
from specd.tasks.project import Project
from specd.tasks.task import SLUG, existing_task, list_tasks, read_config

Graph = Mapping[str, tuple[str, ...]]  # task → the tasks it needs, in the order its config.json names them


def needs(folder: Path, config: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The names in ``depends_on`` of the task in ``folder``, checked for shape (not for existence)."""
    data = read_config(folder) if config is None else config
    value = data.get("depends_on", [])
    where = f"{folder / 'config.json'}: depends_on"
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TaskError(f"{where}: expected a list of task names, got {type(value).__name__}",
                        fix='write it as ["other-task", ...], or remove the key')
    names: list[str] = []
    for index, name in enumerate(value):
        if not isinstance(name, str) or not SLUG.match(name) or ".." in name:
            raise TaskError(f"{where}[{index}]: {name!r} is not a task name",
                            fix="use the name of a folder under .specd/tasks/")
        if name == folder.name:
            raise TaskError(f"{where}[{index}]: a task cannot depend on itself", fix=f"remove {name!r} from the list")
        if name not in names:
            names.append(name)
    return tuple(names)


def load(project: Project) -> dict[str, tuple[str, ...]]:
    """Every task's needs; the graph is checked (unknown names, cycles) before it is returned."""
    graph = {name: needs(existing_task(project, name)) for name in list_tasks(project)}
    check(graph, project)
    return graph


def check(graph: Graph, project: Project | None = None) -> None:
    for task, wanted in graph.items():
        for name in wanted:
            if name not in graph:
                where = f"{project.rel(project.tasks_dir / task)}/config.json" if project else f"task {task!r}"
                known = ", ".join(sorted(graph)) or "none"
                raise TaskError(f"{where}: depends_on names {name!r}, which is not a task (tasks: {known})",
                                fix=f"create it with `specd new {name}`, or remove it from depends_on")
    cycle = find_cycle(graph) if any(graph.values()) else None  # no edge, no cycle: no walk of every task
    if cycle:
        raise TaskError(f"the task graph has a cycle: {' -> '.join(cycle)}",
                        fix=f"remove {cycle[1]!r} from depends_on in the config.json of task {cycle[0]!r} "
                            "(or another edge of the cycle)")


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as a path that ends where it starts (a → b → a), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(task: str) -> list[str] | None:
        state[task] = 1
        path.append(task)
        for name in graph.get(task, ()):
            if state.get(name) == 1:
                return [*path[path.index(name):], name]
            if name in graph and name not in state and (found := visit(name)):
                return found
        path.pop()
        state[task] = 2
        return None

    for task in sorted(graph):
        if task not in state and (found := visit(task)):
            return found
    return None


def closure(graph: Graph, targets: Iterable[str]) -> list[str]:
    """``targets`` and everything they need, dependencies first (ties in name order, so runs repeat)."""
    wanted: set[str] = set()
    stack = list(targets)
    while stack:
        task = stack.pop()
        if task not in wanted:
            wanted.add(task)
            stack += graph.get(task, ())
    return [t for t in order(graph) if t in wanted]


def order(graph: Graph) -> list[str]:
    """Every task, each after all it needs (the graph must have no cycle)."""
    done: list[str] = []
    seen: set[str] = set()

    def place(task: str) -> None:
        if task in seen:
            return
        seen.add(task)
        for name in graph.get(task, ()):
            place(name)
        done.append(task)

    for task in sorted(graph):
        place(task)
    return done


@dataclass(frozen=True)
class Readiness:
    ready: bool
    waiting_for: tuple[str, ...]  # needed tasks that are not COMPLETE yet


def readiness(graph: Graph, task: str, statuses: Mapping[str, str]) -> Readiness:
    pending = tuple(name for name in graph.get(task, ()) if statuses.get(name) != "COMPLETE")
    return Readiness(not pending, pending)


def check_new(project: Project, task: str, after: Iterable[str]) -> tuple[str, ...]:
    """The needs of a task about to be created, checked against the graph with it added (before anything
    is written): an unknown name, or a cycle an existing ``depends_on`` naming ``task`` would close."""
    wanted = tuple(dict.fromkeys(after))
    where = f"specd new {task} --after"
    for name in wanted:
        if not SLUG.match(name) or ".." in name:
            raise TaskError(f"{where} {name}: {name!r} is not a task name",
                            fix="use the name of a folder under .specd/tasks/")
        if name == task:
            raise TaskError(f"{where} {name}: a task cannot depend on itself", fix=f"drop --after {name}")
    graph = {name: _readable_needs(project, name) for name in list_tasks(project)}
    unknown = [name for name in wanted if name not in graph]
    if unknown:
        known = ", ".join(sorted(graph)) or "none"
        raise TaskError(f"{where} {unknown[0]}: {unknown[0]!r} is not a task (tasks: {known})",
                        fix=f"create it first with `specd new {unknown[0]}`, or drop --after {unknown[0]}")
    graph[task] = wanted
    check(graph, project)
    return wanted


def _readable_needs(project: Project, name: str) -> tuple[str, ...]:
    """Another task's needs, or none when its files cannot be read: that task is refused where it is used (its
    own run, its row in `specd status`), and a broken neighbour does not stop a new task from being made. A cycle
    through it cannot be seen until it is mended, and is refused then."""
    try:
        return needs(existing_task(project, name))
    except SpecdError:
        return ()


def annotate(rows: list[dict[str, Any]]) -> str | None:
    """Add ``ready`` and ``waits_for`` to `specd status` rows (each holding its ``needs``); returns what is
    wrong with the graph, if anything, so the listing can say it once and still show every task."""
    graph = {str(row["task"]): tuple(row.get("needs") or ()) for row in rows}
    statuses = {str(row["task"]): str(row.get("status")) for row in rows}
    problem = None
    try:
        check(graph)
    except TaskError as exc:
        problem = f"{exc.message} (fix: {exc.fix})" if exc.fix else exc.message
    for row in rows:
        if not graph[str(row["task"])]:  # most tasks need none: 10,000 rows list without a Readiness each
            row["ready"], row["waits_for"] = True, []
            continue
        state = readiness(graph, str(row["task"]), statuses)
        row["ready"], row["waits_for"] = state.ready, list(state.waiting_for)
    return problem
