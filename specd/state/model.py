"""The run state record (``.pipeline-state.json``), as plain dataclasses.

Statuses: IN_PROGRESS, WAITING_FOR_HUMAN, BLOCKED (resumable once fixed),
COMPLETE, FAILED, CANCELLED, ABORTED (interrupted; resumable).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from specd.state import clusters

STATE_VERSION = 3  # 2: history in its own append-only file (see state/store.py); 3: packed cursor, shape file
# The parts of one step, in the order they run; a resumed step continues after the last one done.
STAGES = ("pre-step", "pre", "step", "checks", "post", "post-step")  # checks: a step's `checks:` (engine/checks.py)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


@dataclass
class Frame:
    """One level of the cursor stack: a pipeline, the step it points at (by name), the phase.

    Names, not indexes, so an edited pipeline file never moves the run onto a different step.
    ``step`` None means this pipeline iteration has run off its end.
    """

    pipeline: str
    step: str | None = None
    phase: str | None = None
    visits: dict[str, int] = field(default_factory=dict)  # per step, for this pipeline iteration
    done: list[str] = field(default_factory=list)  # steps finished in this pipeline iteration
    index: int | None = None  # only in states saved before names; the runner migrates it on load

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Frame:
        if data.get("failures"):  # saved before failure clusters
            data["failure_clusters"] = clusters.fold(data["failures"], data.get("failure_clusters"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Current:
    """The step being run now, so a crash resumes exactly here."""

    step: str
    pipeline: str
    phase: str | None
    visit: int
    attempt: int = 0  # dispatches of the step itself so far (a crash or failure means another)
    completed: list[str] = field(default_factory=list)  # stages from STAGES that finished
    outcome: str | None = None
    summary: str = ""
    started_at: str = field(default_factory=now)
    snapshot: dict[str, str] = field(default_factory=dict)  # task files' sha256 before the step
    note: str = ""  # a human's note (approve/reject) that goes into this step's prompt
    output_errors: list[str] = field(default_factory=list)  # why this visit's outputs were refused (issue 30)
    checked: int = 0  # rounds of the step's checks that failed in this visit (an approve counts afresh)


@dataclass
class RunState:
    task: str
    run_id: str = field(default_factory=new_run_id)
    pipeline_digest: str = ""
    pipeline_source: str = ""
    mode: str = "interactive"
    status: str = "IN_PROGRESS"
    reason: str = ""  # why it stopped: the failure, the gate, the budget
    waiting: dict[str, Any] | None = None  # what a human must look at: {kind, step, pipeline, phase, ...}
    answer: dict[str, Any] | None = None  # a human's answer not yet acted on: {answer, step, pipeline, phase, note}
    agent: str | None = None  # the --agent spec the run was started with; a bare `continue` reuses it
    max_cost: float | None = None  # the --max-cost given to the run, reused the same way
    shape: dict[str, list[str]] = field(default_factory=dict)  # step names per pipeline at the last save
    started_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    heartbeat_at: str = field(default_factory=now)
    cursor: list[Frame] = field(default_factory=list)  # empty: not placed yet (runner) or finished
    current: Current | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    # One row per step and normalised reason (state/clusters.py); older states' `failures` list folds into it.
    failure_clusters: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)  # gates and human decisions
    notes: list[str] = field(default_factory=list)
    notified: list[str] = field(default_factory=list)  # the waits and failures a message was sent for (notify:)
    phases_completed: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)  # run totals
    version: int = STATE_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunState:
        data = dict(data)
        data["cursor"] = [Frame.from_dict(f) for f in data.get("cursor", [])]
        if data.get("current"):
            fields = set(Current.__dataclass_fields__)
            data["current"] = Current(**{k: v for k, v in data["current"].items() if k in fields})
        if data.get("failures"):  # saved before failure clusters
            data["failure_clusters"] = clusters.fold(data["failures"], data.get("failure_clusters"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})
