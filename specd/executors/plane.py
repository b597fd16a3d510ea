"""The control plane: the local executor kept running, starting every task that is answered or asked for.

An answer only records a decision (``engine.control``); something must then run the task. `specd ui` (and
`specd serve`, and `specd run --keep-waiting` for its own run) is that something for the whole project: every
``POLL`` it looks at each task's run state, and a task answered anywhere (the page, `specd approve` in another
terminal, another clone through the page's API) and held by no process goes on in its home, as its child
`specd continue`, within the executor's jobs limit. The page's Run and Continue buttons ``ask`` for a task.

It never starts a task another process holds (the task lock), one that lives on Temporal (its workflow runs
it), or one whose last start left its state untouched (a child that failed before its run began): that one
waits for its state to change, rather than being started again four times a second. A stopped task (a run that
ended without saving its end) waits for someone to ask, with one exception: a run a control plane started,
whose plane then died with it (killed, the machine lost). Nobody stopped that task on purpose, and the answer
that started it was already taken up, so the next control plane takes it up once, at its start (``take_up``).
"""

from __future__ import annotations

import os
import queue
import time
from pathlib import Path

from specd.errors import SpecdError, UsageError
from specd.executors import held, worktrees
from specd.executors.local import Listener, LocalExecutor
from specd.executors.results import Settings, current_status
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.tasks import graph as graphs
from specd.tasks import home, idle, locate
from specd.tasks.project import Project
from specd.tasks.status import task_status

Mark = tuple[int, int]  # a run state file's change time and size
READY = ("NOT_STARTED", "ABORTED")  # besides an idle IN_PROGRESS: what Run may start
ASK_WAIT = 2.0  # seconds `ask` waits for the task's child to start (its worktree made), at most


class ControlPlane(LocalExecutor):
    def __init__(self, project: Project, settings: Settings, listener: Listener, *, serve: bool) -> None:
        super().__init__(project, settings, listener)
        self.serve = serve  # `specd ui`: until stopped; `run --keep-waiting`: until its own tasks settle
        self.asked: queue.Queue[str] = queue.Queue()  # from the page's thread: tasks to start
        self.backlog: list[str] = []  # asked for, waiting for a free job
        self.tried: dict[str, Mark | None] = {}  # the state each task had when this plane last started it
        self.quiet: dict[str, Mark | None] = {}  # the state each task had when last found not answered
        self.looked = 0.0
        self.identity = os.environ.get(home.PLANE_ENV, "")  # what this plane's runs carry (claim.py)
        self.taken_up = False

    def _graph(self) -> graphs.Graph:
        if not self.serve:
            return super()._graph()
        try:
            return super()._graph()
        except SpecdError as exc:  # the page must still come up and say so; a task started later reloads it
            self.listener("", {"kind": "task_broken", "reason": str(exc)})
            return {}

    def _targets(self, names: list[str], broken: dict[str, str], known: dict[str, str]) -> list[str]:
        return super()._targets(names, broken, known) if names or not self.serve else []  # `ui` starts nothing itself

    def _serving(self) -> bool:
        return self.serve and not self.stopping

    def ask(self, task: str) -> str:
        """Start ``task`` soon (the page's Run and Continue); refused, with the fix, when it is not ready."""
        where = worktrees.task_project(self.project, task)
        home.local(self.project, task, home.current(self.project, task))  # Temporal's: refused, naming it
        view = task_status(where, task, listing=True)
        status, shown = str(view["status"]), view.get("idle")
        if task in self.running or view.get("running"):
            raise UsageError(f"task {task!r} is running already", fix=f"follow it with `specd logs {task} -f`")
        if status not in READY and shown is None:
            raise UsageError(f"task {task!r} is {status}, so there is nothing to run", fix=fix_for(task, status))
        unmet = [n for n in view.get("needs") or () if current_status(self.project, n) != "COMPLETE"]
        if status == "NOT_STARTED" and unmet:
            raise UsageError(f"task {task!r} needs {', '.join(unmet)}, not complete yet",
                             fix=f"run those first: `specd run {task}` runs them and then {task}")
        self.asked.put(task)
        if len(self.running) >= self.settings.jobs:
            return f"{task} starts once a job is free ({len(self.running)} running, at most {self.settings.jobs})"
        deadline = time.monotonic() + ASK_WAIT  # so the page the asker sees next already shows it running
        while task not in self.running and time.monotonic() < deadline and not self.stopping:
            time.sleep(0.05)
        return f"{task} runs now"

    def _look(self, status: dict[str, str]) -> None:
        if time.monotonic() - self.looked < held.POLL:
            return
        self.looked = time.monotonic()
        while not self.asked.empty():
            self.backlog.append(self.asked.get())
        folders = self._folders()
        if not self.taken_up:
            self.taken_up = True
            self.backlog += take_up(self.project, folders, self.identity, self.listener)
        for task in list(dict.fromkeys(self.backlog)):
            if task in self.running:
                self.backlog.remove(task)
            elif self._may_start():
                self.backlog.remove(task)
                self._go(task, folders.get(task), status)
        for task, folder in folders.items():
            if task in self.running or task in self.waiting or not self._may_start():
                continue
            mark = _mark(folder)
            if (task in self.tried and self.tried[task] == mark) or (task in self.quiet and self.quiet[task] == mark):
                continue  # started from this very state and it did not move, or not answered: wait for a change
            try:
                ready = idle.goes_on(folder, task) and home.current(self.project, task).kind != "temporal"
                if not ready and not idle.goes_on(folder, task, held_too=True):
                    self.quiet[task] = mark  # an answer rewrites the state file; a lock let go does not
            except SpecdError as exc:  # a task with broken files: said once, the others go on
                self.tried[task] = mark
                self.listener(task, {"kind": "task_broken", "reason": str(exc)})
                continue
            if ready:
                self._go(task, folder, status)

    def _go(self, task: str, folder: Path | None, status: dict[str, str]) -> None:
        self.tried[task] = _mark(folder) if folder else None
        try:
            self._start(task, self._needs(task, status), status)
        except SpecdError as exc:  # its files, or a need's, do not load: said, and the plane goes on
            self.listener(task, {"kind": "task_broken", "reason": str(exc)})

    def _needs(self, task: str, status: dict[str, str]) -> tuple[str, ...]:
        """What ``task`` needs, each with its status known to the executor (which merges their branches)."""
        if task not in self.graph:
            self.graph = graphs.load(self.project)  # a task made since the plane started (or a graph fixed)
        for need in self.graph.get(task, ()):
            status.setdefault(need, current_status(self.project, need))
        status.setdefault(task, current_status(self.project, task))
        return self.graph.get(task, ())

    def _folders(self) -> dict[str, Path]:
        """Every task's live folder: the main tree's, or its worktree's while it lives there. Four times a second,
        so one listing of each folder and no file read: a task's state is read only when its file changed."""
        found: dict[str, Path] = {}
        for root in (self.project.features_dir, self.project.tasks_dir):  # tasks/ wins a name in both
            try:
                with os.scandir(root) as entries:
                    found.update({e.name: Path(e.path) for e in entries if e.is_dir() and not e.name.startswith(".")})
            except OSError:
                continue
        for name in locate.in_worktrees(self.project):
            found[name] = locate.worktree_root(self.project, name) / ".specd" / "tasks" / name
        return found


def take_up(project: Project, folders: dict[str, Path], identity: str, listener: Listener) -> list[str]:
    """The tasks a control plane before this one (``identity``: this one) started and that stopped with it:
    recorded as run by another plane's child, saved IN_PROGRESS, unanswered, and held by no process."""
    if not identity:
        return []
    main, found = home.main_of(project), []
    try:
        recorded = [path.stem for path in (main.specd_dir / home.FOLDER).iterdir() if path.suffix == ".json"]
    except OSError:
        return []  # no task was ever run here
    for task in recorded:
        folder = folders.get(task)
        if folder is None:
            continue
        try:
            record = home.read(main, task)
            plane = record.plane if record is not None and isinstance(record.plane, str) else ""
            if record is None or not plane.split() or plane == identity or record.kind == "temporal":
                continue  # no plane's run (or a record edited by hand into something else)
            state = StateStore(folder, task).load(with_history=False)
        except SpecdError:
            continue  # its files are broken: the look below says so, as for any task
        if state is not None and idle.idle(state, TaskLock(folder, task).is_held()) == idle.STOPPED:
            found.append(task)
            listener(task, {"kind": "notice", "message": "goes on: the control plane that ran it "
                            f"(pid {plane.split()[0]}) stopped without saving its end"})
    return found


def _mark(folder: Path) -> Mark | None:
    try:
        st = os.stat(folder / ".pipeline-state.json")  # noqa: PTH116 - every task, four times a second
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def fix_for(task: str, status: str) -> str:
    """What to do with a task in ``status`` that there is nothing to run for (Run, Continue, `specd mcp`)."""
    return {"WAITING_FOR_HUMAN": f"answer it first: approve, reject or skip (`specd approve {task}`)",
            "BLOCKED": f"fix what blocked it, then retry (`specd retry {task}`)",
            "FAILED": f"retry it (`specd retry {task}`)",
            "CANCELLED": f"rerun it from a step (`specd rerun {task} --from STEP`)",
            "COMPLETE": f"rerun it from a step (`specd rerun {task} --from STEP`) to run it again"}.get(
        status, f"see `specd status {task}`")

