"""The local executor: every task of a closure, up to N at once, each in its own worktree, dependencies first.

A task starts only when everything it needs is COMPLETE. A task whose need ended otherwise (waiting, blocked,
failed) is not started and is reported as waiting on that need. ``--max-cost`` caps the whole run: each child
gets what is left (total minus what the others spent so far) and no task starts once it is spent.

A task another process has (another `specd run`, a `specd continue`: ``taken``) is left to it, its tree untouched;
the run waits for that process to let it go, then reports how the task ended there, or goes on with it when it
was let go unfinished (NOT_STARTED, IN_PROGRESS, ABORTED).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import Any

from specd.errors import TaskError
from specd.executors import child as children
from specd.executors import held, leftovers, place, taken, warm, worktrees
from specd.executors.results import BROKEN, Result, Settings, current_status, mark_homes, targets
from specd.executors.sharing import Sharing
from specd.state.lock import HELD
from specd.state.store import StateStore
from specd.tasks import graph as graphs
from specd.tasks.project import Project
from specd.tasks.status import FINAL
from specd.tasks.task import existing_task

Listener = Callable[[str, dict[str, Any]], None]  # (task, event): the child's events plus the executor's own


class LocalExecutor(Sharing):
    def __init__(self, project: Project, settings: Settings, listener: Listener) -> None:
        self.project, self.settings, self.listener = project, settings, listener
        self.inbox: queue.Queue[tuple[str, dict[str, Any] | None]] = queue.Queue()
        self.running: dict[str, children.Child] = {}
        self.results: dict[str, Result] = {}
        self.spent = 0.0
        self.started: set[str] = set()  # tasks this run started
        self.here: set[str] = set()  # of those, the ones that live in the main tree (no branch to land)
        self.graph: graphs.Graph = {}
        self.waiting: dict[str, tuple[str, ...]] = {}  # --keep-waiting: task -> its needs, until answered
        self.holds: dict[str, taken.Hold] = {}  # the tasks this run has (being placed, or running)
        self.elsewhere: dict[str, taken.Holder] = {}  # tasks another process has: left to it, until it lets go
        self.looked_away = 0.0  # when ``elsewhere`` was last looked at
        self.stopping = False
        self.refused: dict[str, TaskError] = {}  # named tasks a workflow of another clone's has: not run here

    def interrupt(self) -> None:
        """SIGINT/SIGTERM: every child saves its state and ends ABORTED; nothing new starts."""
        self.stopping = True
        self.waiting.clear()  # their results already say they wait
        for running in list(self.running.values()):
            running.terminate()

    def run(self, names: list[str]) -> dict[str, Result]:
        self.graph = graph = self._graph()
        if not self._serving():  # a control plane serves a project without git too: its main tree's tasks
            worktrees.check(self.project)
            leftovers.settle(self.project, graph, self.listener)  # a killed run's processes and last commits
        broken: dict[str, str] = {}
        known: dict[str, str] = {}  # read once: a task's status takes its files and its plan
        order = graphs.closure(graph, self._targets(names, broken, known))
        status = {t: known[t] if t in known else current_status(self.project, t, broken) for t in order}
        for task, error in self.refused.items():  # another clone's workflow has it (``_targets``)
            self._refused(task, error, status)
        pending = [t for t in order if status[t] not in (*FINAL, BROKEN) and t not in self.refused]
        if pending:  # its imports overlap with the first worktrees made here, rather than follow them
            warm.start_shared()
        for task in order:
            if status[task] in FINAL:
                self.results[task] = Result(task, status[task])
            elif status[task] == BROKEN:  # said, then left alone: the other tasks run
                self._broken(task, broken[task], status)
        try:
            while pending or self.running or self.waiting or self._away() or self._serving():
                pending += self._let_go(status)
                before, pending = len(pending), self._start_ready(pending, graph, status)
                self._resume_answered(status)
                self._look(status)
                if not self.running and not self.waiting and not self._away() and not self._serving():
                    if len(pending) < before:  # the slots went to tasks that could not start (broken, blocked)
                        continue
                    break
                if self.running:
                    self._receive(status)
                else:
                    time.sleep(held.POLL)
        finally:
            warm.close_shared()
            for hold in self.holds.values():  # a run cut short by an error: its children are gone with it
                hold.release()
        for task in pending:  # never started: the run was stopped, or the budget is spent
            why = "interrupted" if self.stopping else "the run's --max-cost is spent"
            self.results[task] = Result(task, status[task], why)
        return mark_homes(self.project, {t: self.results[t] for t in order})

    def _graph(self) -> graphs.Graph:
        return graphs.load(self.project)

    def _targets(self, names: list[str], broken: dict[str, str], known: dict[str, str]) -> list[str]:
        """As ``targets``; of every unfinished task (no names), those that live on Temporal are left to its
        workers, and said so (named, one is refused: it would be a second copy)."""
        found = targets(self.project, names, self.graph, broken, known)
        from specd.executors.temporal import elsewhere, record

        away = [] if names else [task for task in found if record.on_temporal(self.project, task)]
        # never run here, yet another clone's workflow may have it: one question to Temporal for all of them
        others, said = elsewhere.running(self.project, elsewhere.first_runs(
            self.project, [task for task in found if task not in away]))
        if said:
            self.listener(found[0], {"kind": "notice", "message": said})
        if names:
            self.refused.update(others)  # named: refused with the fix, once their status is known
        else:
            away += others
        for task in away:
            self.listener(task, {"kind": "notice", "message": f"runs on Temporal: its workers run it, not this "
                                                              f"run (`specd status {task}` shows where it stands)"})
        return [task for task in found if task not in away]

    def _serving(self) -> bool:
        """The run goes on with nothing to run or wait for (a control plane, until it is stopped)."""
        return False

    def _look(self, status: dict[str, str]) -> None:
        """Between turns of the loop: a control plane starts what was answered or asked for (plane.py)."""

    def _start_ready(self, pending: list[str], graph: graphs.Graph, status: dict[str, str]) -> list[str]:
        left: list[str] = []
        ready: list[tuple[str, tuple[str, ...]]] = []  # their trees are made side by side (place.py)
        for task in pending:
            needs = graph.get(task, ())
            stuck = tuple(n for n in needs if status[n] != "COMPLETE" and n not in pending
                          and n not in self.running and n not in self.waiting and n not in self.elsewhere)
            if stuck:
                self.results[task] = Result(task, status[task], "waits for " + ", ".join(stuck), stuck)
                self.listener(task, {"kind": "task_held", "waiting_for": list(stuck)})
            elif any(status[n] != "COMPLETE" for n in needs) or not self._may_start(len(ready)):
                left.append(task)
            elif self._take(task, status):  # else another process has it: left to it (self.elsewhere)
                ready.append((task, needs))
        return left + [placed.task for placed in place.place_all(self.project, ready)
                       if not self._launch(placed, status)]

    def _may_start(self, starting: int = 0) -> bool:
        budget = self.settings.max_cost
        return (not self.stopping and len(self.running) + starting < self.settings.jobs
                and (budget is None or self.spent < budget))

    def _start(self, task: str, needs: tuple[str, ...], status: dict[str, str]) -> None:
        if task in self.running or task in self.elsewhere:  # one child per task, and none beside another's
            return
        if self._take(task, status):
            self._launch(place.place(self.project, task, needs), status)

    def _broken(self, task: str, reason: str, status: dict[str, str], **said: Any) -> None:
        status[task] = BROKEN
        self.results[task] = Result(task, BROKEN, reason)
        self.listener(task, {"kind": "task_broken", "reason": reason, **said})

    def _refused(self, task: str, error: TaskError, status: dict[str, str]) -> None:
        """Its home says it runs elsewhere (on Temporal): reported as it is, not run, and not BROKEN (its files
        load); the run exits 2, as for any bad input, and the reason carries the fix."""
        self.listener(task, {"kind": "task_broken", "reason": str(error), "refused": True})
        now = current_status(self.project, task, {})
        status[task] = now
        self.results[task] = Result(task, now, f"not run here: {error}", input_error=True)

    def _launch(self, placed: place.Placed, status: dict[str, str]) -> bool:
        """Start the placed task's run; False when it was not started (the run was stopped meanwhile)."""
        task, tree, error = placed.task, placed.tree, placed.error
        if error is not None or tree is None or self.stopping:
            self._release(task)  # not started: nothing of it runs
        if isinstance(error, TaskError):  # where it lives says it cannot run here (home.py): bad input, with its fix
            self._refused(task, error, status)
            return True
        if error is not None or tree is None:  # a need's branch does not merge, or git refused the worktree
            status[task] = "BLOCKED"
            self.results[task] = Result(task, "BLOCKED", str(error))
            self.listener(task, {"kind": "task_finished", "status": "BLOCKED", "reason": str(error)})
            return True
        if self.stopping:  # interrupted while its tree was made: it stays pending, and is reported so
            return False
        self.running[task] = children.start(task, tree, self._options(task, tree), self.inbox, time.monotonic())
        status[task] = "IN_PROGRESS"
        self.started.add(task)
        if placed.here:
            self.here.add(task)
            self.listener(task, {"kind": "task_started", "worktree": None, "home": "main",
                                 "notice": f"{task} lives in the main tree (its first run was `specd continue`): "
                                           "it goes on there, in no worktree"})
        else:
            self.listener(task, {"kind": "task_started", "worktree": self.project.rel(tree)})
        return True

    def _options(self, task: str, tree: Any) -> list[str]:
        options = [f"--{self.settings.mode}"] if self.settings.mode else []
        if self.settings.agent:
            options += ["--agent", self.settings.agent]
        if self.settings.max_cost is not None:
            # the child's budget is its run's total so far plus what this whole run has left
            state = StateStore(existing_task(Project(tree), task), task).load(with_history=False)
            before = float(state.usage.get("cost_usd") or 0) if state else 0.0
            options += ["--max-cost", f"{before + max(0.0, self.settings.max_cost - self.spent):.6f}"]
        return options

    def _receive(self, status: dict[str, str]) -> None:
        try:
            task, event = self.inbox.get(timeout=0.2)  # a timeout, so signal handlers run promptly
        except queue.Empty:
            return
        running = self.running[task]
        if event is None:
            self._finished(running, status)
            return
        kind = event.get("kind")
        if kind == "step_started":
            running.step = str(event.get("step") or "")
        elif kind == "step_finished":  # a step's whole usage; the live `usage` events are its running total
            usage = event.get("usage") or {}
            running.tokens += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            running.cost += float(usage.get("cost_usd") or 0)
            self.spent += float(usage.get("cost_usd") or 0)
        elif kind == "run_finished":
            running.finished = event
        self.listener(task, event)

    def _finished(self, running: children.Child, status: dict[str, str]) -> None:
        task = running.task
        del self.running[task]
        self._release(task)
        error, (state, reason) = children.bad_input(running), children.status_of(running)
        children.ended(running)
        if error is None:
            self._ended(task, state, reason, status)
            return
        other = taken.holder(self.project, task)
        if other is not None or error.startswith(f"task {task!r} {HELD} "):
            # refused the task's lock: a `specd continue` or an answer took it as this child started (the look
            # below sees when it is let go: an answer's moment may be over already)
            self._leave(task, other or taken.Holder(None, run=False), status)
            return
        # Nothing ran, or it stopped before it could save an end: the task is as its files say, and the error
        # (with its fix) is what to act on. Not FAILED: the run exits 2, as `specd continue` does.
        broken: dict[str, str] = {}
        now = current_status(self.project, task, broken)
        said = "stopped on bad input" if running.step else "not run, bad input (the task is as it was)"
        self._ended(task, now, f"{said}: {error}", status, input_error=True)

    def _ended(self, task: str, state: str, reason: str, status: dict[str, str], **result: Any) -> None:
        """``task`` ended in ``state``, here or in another process (``elsewhere``)."""
        status[task] = state
        self.results[task] = Result(task, state, reason, **result)
        self.listener(task, {"kind": "task_finished", "status": state, "reason": reason,
                             **{key: value for key, value in result.items() if value}})
        if (self.settings.keep_waiting and state == "WAITING_FOR_HUMAN" and not self.stopping
                and held.waiting(self.project, task)):
            self.waiting[task] = self.graph.get(task, ())

    def _resume_answered(self, status: dict[str, str]) -> None:
        """--keep-waiting: start again every held task someone has answered since it stopped."""
        for task in list(self.waiting):
            now = held.answered(self.project, task)
            if now is None:
                continue
            if now in FINAL:  # cancelled while it waited: nothing to resume
                del self.waiting[task]
                status[task] = now
                self.results[task] = Result(task, now)
            elif self._may_start():
                self._start(task, self.waiting.pop(task), status)
