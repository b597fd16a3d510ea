"""Run control outside the loop: cancel, retry, rerun --from, and answering a waiting run.

Each change is made under the task's lock, to the saved state, and recorded as a checkpoint saying who
asked for it and from where (``origin``); history is only ever added to or marked, never cut.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from specd.engine import answers
from specd.errors import ConfigError, LockHeld, TaskError, UsageError, did_you_mean
from specd.pipeline import cursor, load_pipeline
from specd.pipeline.load import last_loaded_pipeline
from specd.pipeline.model import PipelineConfig
from specd.state import checkpoint
from specd.state.checkpoint import Origin
from specd.state.lock import TaskLock, read_owner
from specd.state.model import Frame, RunState
from specd.state.store import StateStore
from specd.tasks import phases
from specd.tasks.project import Project
from specd.tasks.task import existing_task

STOP_WAIT = 60.0  # seconds for a cancelled run to save its state and let go of the lock


def edit(project: Project, task: str, change: Callable[[RunState, PipelineConfig], str],
         *, create: bool = False, needs_pipeline: bool = True) -> str:
    """Load the state under the lock, apply ``change``, save; returns what ``change`` said.

    A broken pipeline file does not stop an answer: ``change`` gets the copy of the pipeline the run last
    loaded, and the answer says so; one that needs no pipeline (``needs_pipeline=False``: cancel, approve,
    retry) gets none, and never looks at it."""
    task_dir = existing_task(project, task)
    store = StateStore(task_dir, task)
    try:
        config: PipelineConfig | None = load_pipeline(project)
        broken = None
    except ConfigError as exc:
        config, broken = None, exc
    with TaskLock(task_dir, task):
        state = store.load()
        if config is None and needs_pipeline:
            config = last_loaded_pipeline(project, state.pipeline_digest if state else None)
            if config is None:
                assert broken is not None
                raise broken
        if state is None:
            if not create:
                raise UsageError(f"task {task!r} has not started yet", fix=f"`specd continue {task}` starts it")
            state = RunState(task=task, pipeline_source=str(config.source) if config else "",
                             pipeline_digest=config.digest if config else "",
                             cursor=cursor.start(config) if config else [])
        try:
            said = change(state, config)  # type: ignore[arg-type]  # None only where needs_pipeline is False
        except Unchanged as same:
            return str(same)
        store.history_changed()  # a rerun marks saved rows superseded in place; answers are rare, so rewrite
        store.save(state)
    if broken is not None:
        used = "the copy of it this run last loaded was used" if config else "it was not needed"
        said += f" (the pipeline file is broken, and {used}: {broken.message.splitlines()[0]})"
    return said


class Unchanged(Exception):  # noqa: N818 - not an error: what an edit that writes nothing says
    """Raised by an edit's change that leaves the state as it is: nothing is saved; its text is the answer."""


def answer(project: Project, task: str, verb: str, note: str, origin: Origin) -> str:
    return edit(project, task, lambda state, config: answers.answer(state, config, verb, note, origin),
                needs_pipeline=verb != "approve")


def cancel(project: Project, task: str, origin: Origin) -> str:
    """Stop a live run (SIGTERM to the lock's owner, which saves and exits), then mark CANCELLED."""
    task_dir = existing_task(project, task)
    lock = TaskLock(task_dir, task)
    stopped = ""
    if lock.is_held():
        owner = read_owner(lock.owner_path) or {}
        pid = owner.get("pid")
        if isinstance(pid, int) and pid != os.getpid():
            # Told first, so the stopping run ends as CANCELLED rather than as an interruption to resume.
            checkpoint.ask_cancel(task_dir, origin)  # the run records who cancelled, in its own last commit
            os.kill(pid, signal.SIGTERM)
            stopped = f"stopped the run (pid {pid}); "
        deadline = time.monotonic() + STOP_WAIT
        while lock.is_held():
            if time.monotonic() > deadline:
                raise TaskError(f"the run of {task!r} (pid {pid}) did not stop within {STOP_WAIT:g} s",
                                fix=f"stop it yourself (`kill {pid}`), then `specd cancel {task}` again")
            time.sleep(0.1)

    def mark(state: RunState, config: PipelineConfig) -> str:
        if state.status == "CANCELLED" and not stopped:
            raise Unchanged("it was already cancelled")  # nothing written, so nothing to commit
        if state.status == "CANCELLED" and state.checkpoints and state.checkpoints[-1]["answer"] == "cancel":
            raise Unchanged("it is CANCELLED")  # the stopped run recorded the cancel itself, and committed it
        checkpoint.record(state, origin, "cancel", state.current.step if state.current else None, was=state.status)
        state.status, state.waiting, state.answered = "CANCELLED", None, ""  # (the stopped run may have set it)
        state.reason = checkpoint.cancel_reason(task)
        return "it is CANCELLED"

    settle = time.monotonic() + STOP_WAIT
    while True:
        try:
            said = edit(project, task, mark, create=True, needs_pipeline=False)
            break
        except LockHeld:
            # The stopped run removes its owner file just before it lets go of the lock: wait out that moment.
            if not stopped or time.monotonic() > settle:
                raise
            time.sleep(0.05)
    return stopped + said + _committed(project, task, "CANCELLED")


def _committed(project: Project, task: str, status: str) -> str:
    """The final record committed as a run commits its own (``docs(<task>): run state CANCELLED``): no run follows
    to commit it, and left in the tree it would ride into the user's next commit. Under the task's lock, as a run
    commits: a run that took the task meanwhile (a rerun) commits the record itself. What git refused is said after
    the answer, which stands either way."""
    from specd import git
    from specd.events import EventBus

    refused: list[str] = []
    listen = EventBus(lambda event: refused.append(str(event.data["message"]))
                      if event.kind == "warning" and str(event.data.get("message", "")).startswith("git:") else None)
    task_dir = existing_task(project, task)
    try:
        with TaskLock(task_dir, task):
            git.commit_finished(project, task, task_dir, listen, status)
    except LockHeld:
        return ""
    return "".join(f" ({message})" for message in refused)


def retry(project: Project, task: str, origin: Origin, *, hand_over: bool = False) -> str:
    """Reopen a FAILED or BLOCKED run at its failed step. ``hand_over``: the caller runs nothing itself (the
    page), so the task is left answered for the control plane; `specd retry` runs it at once instead, and a
    control plane starting it too would only lose the race for the lock."""

    def reopen(state: RunState, config: PipelineConfig) -> str:
        if state.status not in ("FAILED", "BLOCKED") and not _held_failure(state):
            raise UsageError(f"task {task!r} has not failed (status {state.status})",
                             fix=f"`specd continue {task}` goes on from where it stands")
        step = (state.waiting or {}).get("step") or (state.cursor[-1].step if state.cursor else None)
        checkpoint.record(state, origin, "retry", step, was=state.status)
        state.status, state.waiting, state.reason = "IN_PROGRESS", None, ""
        state.answered = "retry" if hand_over else ""
        return f"step {step!r} runs again"

    return edit(project, task, reopen, needs_pipeline=False)


def _held_failure(state: RunState) -> bool:
    """A failure cluster that reached its retry limit waits for a human; `retry` is one of the answers."""
    return state.status == "WAITING_FOR_HUMAN" and (state.waiting or {}).get("kind") == "failure_cluster"


def rerun(project: Project, task: str, step: str, phase: str | None, origin: Origin, *,
          hand_over: bool = False) -> str:
    """Put the cursor at ``step`` (in ``phase``); later history rows are marked superseded, never deleted.
    ``hand_over`` as in ``retry``."""
    task_dir = existing_task(project, task)

    def reopen(state: RunState, config: PipelineConfig) -> str:
        known = [p.id for p in phases.discover(task_dir)]
        if phase is not None and phase not in known:
            raise UsageError(f"task {task!r} has no phase {phase!r}", fix=f"use one of: {', '.join(known) or '-'}")
        path = _path_to(config, step, in_phase=phase is not None)
        frames, here = [], None
        for pipeline, name, foreach in path:
            order = cursor.names(config, pipeline)
            frames.append(Frame(pipeline, name, here, done=order[:order.index(name)]))
            here = phase if foreach else here
        first = next((i for i, h in enumerate(state.history) if not h.get("superseded") and
                      (h.get("step"), h.get("pipeline"), h.get("phase")) == (step, path[-1][0], here)), None)
        for row in state.history[first if first is not None else len(state.history):]:
            row["superseded"] = True
        state.phases_completed = [p for p in state.phases_completed if phase is not None and p < phase]
        state.cursor, state.current, state.answer = frames, None, None
        checkpoint.record(state, origin, "rerun", step, phase=here, was=state.status)
        state.status, state.waiting, state.reason = "IN_PROGRESS", None, ""
        state.answered = "rerun" if hand_over else ""
        marked = len(state.history) - (first if first is not None else len(state.history))
        return f"the run starts again at {step!r}" + (f" (phase {phase})" if phase else "") + (
            f"; {marked} later history rows are kept, marked superseded" if marked else "")

    return edit(project, task, reopen, create=True)


def _path_to(config: PipelineConfig, step: str, *, in_phase: bool) -> list[tuple[str, str, bool]]:
    """(pipeline, step name, is a foreach-phases reference) from main down to ``step``; shallowest first."""
    queue: list[list[tuple[str, str, bool]]] = [[]]
    while queue:
        trail = queue.pop(0)
        pipeline = config.step(trail[-1][0], trail[-1][1]).pipeline if trail else "main"
        assert pipeline is not None
        crossed = any(foreach for _, _, foreach in trail)
        if step in cursor.names(config, pipeline) and crossed == in_phase:
            return [*trail, (pipeline, step, False)]
        for ref in config.steps(pipeline):
            if ref.pipeline and all(p != ref.pipeline for p, _, _ in trail) and len(trail) < 20:
                queue.append([*trail, (pipeline, ref.name, ref.foreach == "phases")])
    every = list(dict.fromkeys(s.name for steps in config.pipelines.values() for s in steps))
    if step not in every:
        raise UsageError(f"no step {step!r} in {config.source}" + did_you_mean(step, every),
                         fix=f"name one of: {', '.join(every)}")
    where = "inside a phase pipeline (drop --phase?)" if in_phase else "outside the phase loop (add --phase?)"
    raise UsageError(f"no step {step!r} {where} in {config.source}",
                     fix="name a step shown by `specd pipeline show`")

