"""A held gate's answer, applied to the task's clone once, however many attempts of the activity carry it.

The workflow keeps each answer and gives it an id (``workflow.uuid4()``) before the activity that applies it
starts; every attempt of that activity carries the same id, and the answer's checkpoint row records it. A worker
killed after the answer's commit was pushed leaves the id on the task's branch: the next attempt finds it there
and goes on from where the run stood, asking nothing again. An attempt that finds the task waiting for no answer
at all (a person answered it in another clone, or an older specd recorded it without an id) goes on too: the run
itself then says what it waits for, and the workflow asks for a new answer only if it does. An answer is never
refused for having been given before, so no retry can fail on it forever.
"""

from __future__ import annotations

from specd.engine import answers, control
from specd.engine.waiting import held
from specd.errors import SpecdError
from specd.pipeline.model import PipelineConfig
from specd.state.checkpoint import Origin
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import existing_task


def apply(project: Project, task: str, answer: tuple[str, str, str], answer_id: str) -> str:
    """Record ``answer`` (verb, note, who sent it) unless it is recorded already; says what was done."""
    verb, note, by = answer
    state = StateStore(existing_task(project, task), task).load()
    if answer_id and state is not None and applied(state, answer_id):
        return f"{verb} {answer_id} was recorded by an earlier attempt; the run goes on"
    if state is None or not held(state):
        status = state.status if state is not None else "NOT_STARTED"
        return f"{verb} not recorded: the task waits for no answer ({status}); the run goes on and says why it stops"

    def change(state: RunState, config: PipelineConfig) -> str:
        said = answers.answer(state, config, verb, note if verb != "skip" else "", Origin("clone", by))
        if answer_id:
            state.checkpoints[-1]["id"] = answer_id
        return said

    try:
        return control.edit(project, task, change, needs_pipeline=verb != "approve")
    except SpecdError as exc:  # an answer the gate cannot take: the run stops at the gate again, and says so
        return f"{verb} not recorded: {exc.message}"


def applied(state: RunState, answer_id: str) -> bool:
    return any(row.get("id") == answer_id for row in state.checkpoints)
