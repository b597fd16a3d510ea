"""Where a task stands, as plain data: for `specd status` tables and `--json`."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from specd.agents import numbered
from specd.errors import SpecdError
from specd.pipeline import cursor, load_pipeline, progress, replan
from specd.pipeline.model import PipelineConfig
from specd.state.lock import TaskLock, read_owner
from specd.state.model import Current, RunState
from specd.state.rounds import view as checks_view
from specd.state.store import StateStore
from specd.state.waits import hint
from specd.system.machine import interrupted_reason
from specd.tasks import graph, home, idle, locate, phases
from specd.tasks.derive import Derived, derive, seed_cursor
from specd.tasks.project import ORCHESTRATOR_NOTE, Project, is_orchestrator, read_settings
from specd.tasks.task import existing_task, read_config

STALL_SECONDS = 120.0
FINAL = ("COMPLETE", "CANCELLED", "FAILED")  # nothing runs next: no plan to work out
HISTORY_KEYS = ("step", "pipeline", "phase", "kind", "hook", "outcome", "summary", "usage", "finished_at",
                "artifacts", "transcript", "session_id", "superseded", "round", "of", "checks")
# Shown only on the rows that have them: typed outputs, refused attempts and `when:` skips (issue 30).
HISTORY_EXTRA = ("attempt", "output", "output_error", "when", "when_value")


def pipeline_or_problem(project: Project) -> tuple[PipelineConfig | None, str | None]:
    """The pipeline, or why it cannot be read: a broken file must not hide where the tasks stand."""
    try:
        return load_pipeline(project), None
    except SpecdError as exc:
        return None, (f"the pipeline file is broken, so next steps and plans are not shown: {exc.message}"
                      f"{f' (fix: {exc.fix})' if exc.fix else ''}")


def task_status(project: Project, task: str, config: PipelineConfig | None = None, *,
                listing: bool = False, broken: str | None = None, found: tuple[Path, str] | None = None,
                ) -> dict[str, Any]:
    """Where ``task`` stands. A ``listing`` row (`specd status` over every task) reads no history rows.
    ``broken`` says the pipeline file could not be read (``config`` is None): the run state alone is shown.
    ``found`` is the task's folder and how to show it, when the caller has already listed the folders."""
    task_dir, shown = found or (existing_task(project, task), "")
    store = StateStore(task_dir, task)
    state = store.load(with_history=not listing)
    if config is None and broken is None:
        config, broken = pipeline_or_problem(project)
    task_config = read_config(task_dir)
    view: dict[str, Any] = {"task": task, "status": "NOT_STARTED", "stage": task_config.get("stage"),
                            "folder": shown or project.rel(task_dir), "needs": list(graph.needs(task_dir, task_config))}
    known = phases.discover(task_dir)
    if config is None:
        return _state_only(view, task, state, store, known, listing)
    if state is None:
        position = derive(task_dir, task_config, config, known)
        _describe_derived(view, position, config)
        probe = RunState(task=task, cursor=seed_cursor(config, position), phases_completed=list(position.done))
    else:
        probe = state
    final = view["status"] == "COMPLETE" or (state is not None and state.status in FINAL)
    pos = None if final else _peek(probe if state is None else copy.deepcopy(state), config, task_dir, view)
    nxt: dict[str, Any] | None = None
    if pos is not None:
        nxt = {"step": pos.step.name, "pipeline": pos.frame.pipeline, "phase": pos.frame.phase}
    if state is not None and state.current is not None and _resumes(state.current, config):
        cur = state.current
        nxt = {"step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase, "resume_after": cur.completed}
    view["next"] = None if final else nxt
    moved = view.pop("_probe", None)
    view["plan"] = [] if final or pos is None or moved is None else remaining(moved, config)
    # [k, N]: "step k of N"; a list, as a row read back from the read model's store has it
    of = progress.step_of(moved, config, len(known)) if view["plan"] else None
    view["progress"] = None if of is None else list(of)
    if state is None:
        view.update(usage={}, phases=[p.id for p in known], hint=f"specd continue {task}",
                    **({} if listing else {"history": []}))
        return view
    view.update(
        status=state.status, reason=state.reason, waiting=state.waiting, run_id=state.run_id, mode=state.mode,
        agent=state.agent, started_at=state.started_at, updated_at=state.updated_at, usage=state.usage,
        **({} if listing else {"history": [_row(h) for h in state.history]}),
        checkpoints=state.checkpoints[-10:], failure_clusters=state.failure_clusters, phases=[p.id for p in known],
        phases_completed=state.phases_completed,
    )
    if not listing:
        view["checks"] = checks_view(state)  # the latest round of a step's checks: attempt n of N
    view["running"] = _running(store, task_dir, task, state, view)
    view["hint"] = "" if view["running"] else hint(task, state)
    return view


def _state_only(view: dict[str, Any], task: str, state: RunState | None, store: StateStore,
                known: list[phases.Phase], listing: bool) -> dict[str, Any]:
    """What the run state says, without the pipeline: no next step or plan, which need the file."""
    # progress as a row built with the pipeline has it: a finished row the index keeps says the same either way
    view.update(next=None, plan=[], progress=None, phases=[p.id for p in known], usage={},
                hint=f"specd continue {task}",
                **({} if listing else {"history": []}))
    if state is None:
        return view
    cur = state.current
    view.update(
        status=state.status, reason=state.reason, waiting=state.waiting, run_id=state.run_id, mode=state.mode,
        agent=state.agent, started_at=state.started_at, updated_at=state.updated_at, usage=state.usage,
        **({} if listing else {"history": [_row(h) for h in state.history]}),
        checkpoints=state.checkpoints[-10:], failure_clusters=state.failure_clusters,
        phases_completed=state.phases_completed,
        next={"step": cur.step, "pipeline": cur.pipeline, "phase": cur.phase} if cur else None)
    if not listing:
        view["checks"] = checks_view(state)
    view["running"] = _running(store, store.task_dir, task, state, view)
    view["hint"] = "" if view["running"] else hint(task, state)
    return view


def _resumes(cur: Current, config: PipelineConfig) -> bool:
    """Whether the step a stopped run was in runs again on `continue`: not when the file was edited to turn it
    off or remove it (the run then passes it by, as the peeked next step says)."""
    try:
        return config.step(cur.pipeline, cur.step).enabled
    except KeyError:
        return False


def _peek(probe: RunState, config: PipelineConfig, task_dir: Path, view: dict[str, Any]) -> cursor.Position | None:
    """Where `continue` would go, re-planned as it would see the (maybe edited) file; ``probe`` is ours to move."""
    view["_probe"] = probe
    try:
        view["plan_notices"] = replan.replan(probe, config)
        return cursor.peek(probe, config, lambda after: phases.next_phase(task_dir, after))
    except (KeyError, IndexError, ValueError, SpecdError, cursor.NoPhases):
        return None  # no phases yet, or the pipeline changed under the run; `continue` explains


def remaining(state: RunState, config: PipelineConfig) -> list[dict[str, Any]]:
    """The steps still to run in each open pipeline iteration, innermost first, in file order."""
    plan: list[dict[str, Any]] = []
    for depth, frame in enumerate(reversed(state.cursor)):
        order = cursor.names(config, frame.pipeline)
        if frame.step not in order:
            continue
        start = order.index(frame.step) + (0 if depth == 0 else 1)
        plan += [{"step": s.name, "pipeline": frame.pipeline, "phase": frame.phase}
                 for s in config.steps(frame.pipeline)[start:] if s.name not in frame.done and s.enabled]
    return plan


def _describe_derived(view: dict[str, Any], position: Derived, config: PipelineConfig) -> None:
    """A task specd has not run yet: say where its files put it (specdacular's routing)."""
    view["derived"] = {"step": position.step, "pipeline": position.pipeline, "phase": position.phase,
                       "complete": position.complete, "phases_done": list(position.done), "why": position.reason}
    if position.complete:
        view["status"] = "COMPLETE"
        view["status_note"] = f"complete according to its files ({position.reason}); specd has not run it"
    elif seed_cursor(config, position) != cursor.start(config) or position.done:
        view["status"] = "IN_PROGRESS"
        view["status_note"] = (f"no specd run yet; its files say {position.reason}, so `specd continue` starts at "
                               f"{position.step}" + (f" (phase {position.phase})" if position.phase else ""))


def last_activity(store: StateStore, state: RunState) -> float | None:
    """Seconds since the agent last showed life: its transcript growing, or an event or save of the run.

    The heartbeat is left out on purpose: it only proves specd is alive, not the agent.
    """
    paths = [store.json_path, store.journal.path]
    folder = store.task_dir / "transcripts" / state.run_id
    if folder.is_dir():
        paths += sorted(folder.iterdir(), key=numbered.key)[-3:]
    times = [_mtime(p) for p in paths]
    known = [t for t in times if t is not None]
    return max(0.0, time.time() - max(known)) if known else None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _running(store: StateStore, task_dir: Any, task: str, state: RunState,
             view: dict[str, Any]) -> dict[str, Any] | None:
    """Tell a live run from a dead one: the lock says alive, the agent's output says progressing."""
    lock = TaskLock(task_dir, task)
    if not lock.is_held():
        view["idle"] = idle.idle(state, running=False)  # what an IN_PROGRESS task nothing runs really is
        if view["idle"] == idle.ANSWERED:
            view["status_note"] = (f"no process has taken the answer up yet: the control plane (`specd ui`) "
                                   f"starts it, or `specd continue {task}`")
        elif view["status"] == "IN_PROGRESS" and not state.reason:
            why = interrupted_reason(store)  # set when the run could not save its own end (disk full, read-only)
            view["status_note"] = (f"interrupted: {why}" if why else "no specd process is running it "
                                   f"(interrupted or killed); `specd continue {task}` resumes")
        return None
    view["idle"] = None
    owner = read_owner(lock.owner_path) or {}
    threshold = float(os.environ.get("SPECD_STALL_SECONDS", STALL_SECONDS))
    age, beat = last_activity(store, state), store.heartbeat_age()
    stalled = age is not None and age > threshold
    said = f"{age:.0f} s ago" if age is not None else "not yet"
    view["status_note"] = f"running (pid {owner.get('pid')}, last agent activity {said})"
    if stalled:
        view["status_note"] += f"; stalled: the agent has shown nothing for over {threshold:g} s"
    if beat is not None and beat > threshold:
        view["status_note"] += f"; specd itself has not beaten its heartbeat for {beat:.0f} s"
    from specd.tasks.follow import live  # only a live run has a transcript being written

    return {"pid": owner.get("pid"), "last_activity_s": age, "heartbeat_age_s": beat, "stalled": stalled,
            **live(store.task_dir, state.run_id)}  # the newest transcript (and its session) while the run goes


def project_notes(project: Project) -> list[str]:
    """What `specd status` should say about the project as a whole."""
    return [ORCHESTRATOR_NOTE] if is_orchestrator(read_settings(project)) else []


def all_status(project: Project, config: PipelineConfig | None = None,
               broken: str | None = None, *, full: bool = True, keep: list[Any] | None = None,
               ) -> list[dict[str, Any]]:
    """Every task's row, from the read model where it still holds. A broken pipeline file (``broken``, said
    once by the caller) leaves out only what needs it; a task whose own files are broken gets an ERROR row, and
    the others are listed. ``full=False``: only the fields a table shows (``readmodel.rows.light``), which a
    warm listing reads without the whole rows. ``keep``: see ``readmodel.rows.listing``."""
    if config is None and broken is None:
        config, broken = pipeline_or_problem(project)
    # Here, not at the top: `status TASK` needs neither the store (sqlite3) nor the fan-out over folders.
    from specd.tasks.readmodel import inputs, rows

    # shown from their worktree, with its branch, and kept under their folder there and their home record
    away = {task: (str(locate.worktree_folder(project, task)), str(home.record(project, task)))
            for task in locate.in_worktrees(project)}
    # How a task folder is shown, worked out once per parent: a realpath per task was a third of a cold listing.
    shown = {str(root): project.rel(root) for root in (project.tasks_dir, project.features_dir)}
    shared = inputs.shared_marks(project, config)  # taken before any row is built

    def build(task: str, entry: tuple[str, frozenset[str], bool] | None) -> rows.Built:
        return listing_row(project, task, entry, config, broken, shown, deep=shared is not None, away=away)

    return rows.listing(project, build, away, full=full, keep=keep, shared=shared)


def listing_row(project: Project, task: str, entry: tuple[str, frozenset[str], bool] | None,
                config: PipelineConfig | None, broken: str | None, shown: dict[str, str], *, deep: bool,
                away: Collection[str] = ()) -> tuple[dict[str, Any], tuple[list[int], int] | None]:
    """One task's listing row, as every listing builds it, and (when ``deep`` and the row is not a finished
    task's) its folder's deep signature taken before it was built. ``entry``: the task's one folder, the watched
    files in it and whether it is a link (None: the name is in both places); ``shown``: how each parent folder
    is shown."""
    from specd.tasks.readmodel import finished, inputs, rows, signature

    try:
        if task in away:
            tree = locate.locate(project, task)  # its home: a task in both places is an ERROR row
            there = rows.deep_there(str(tree.tasks_dir / task)) if deep else None  # taken before it is built
            config, broken = pipeline_or_problem(tree)
            plainly = config is not None and inputs.named_plainly(config)  # else a workflow no mark watches
            return task_status(tree, task, config, listing=True, broken=broken) | {
                "branch": locate.branch(task), "folder": project.rel(tree.tasks_dir / task)}, there if plainly else None
        found = None
        # A linked folder is shown where it points. Strings: no Path objects made per task.
        if entry is not None and not entry[2]:
            where = f"{shown[entry[0][:-len(task) - 1]]}/{task}"
            quick = None if config is None else finished.finished_row(task, entry[0], where, entry[1])
            if quick is not None:
                return quick, None
            found = (Path(entry[0]), where)
        # an unfinished row is kept under its whole tree's marks, taken before it is built
        marks = signature.deep(entry[0]) if entry is not None and deep else None
        return task_status(project, task, config, listing=True, broken=broken, found=found), marks
    except SpecdError as exc:
        return {"task": task, "status": "ERROR", "reason": str(exc), "next": None}, None


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    extra = {k: entry[k] for k in HISTORY_EXTRA if k in entry} if "output" in entry or "when" in entry else {}
    if "backend" in entry:  # an agent per step (issue 30): the backend this row's step ran on
        extra["backend"] = entry["backend"]
    if "group" in entry or "members" in entry:  # a parallel group's member rows, and its own (issue 30)
        extra.update({k: entry[k] for k in ("group", "members", "started_at") if k in entry})
    return {**{k: entry.get(k) for k in HISTORY_KEYS}, **extra}
