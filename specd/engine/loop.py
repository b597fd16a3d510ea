"""What the brain's helpers (the gate, a hook stage) may see of the loop, below all three of them.

``gates`` and ``hook_stage`` work on a ``Loop``, not on the ``Brain`` class, so none of the three imports
another in a circle; the brain satisfies this protocol. ``Stop`` ends the loop from any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from specd.events import EventBus
from specd.human import Human
from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame, RunState
from specd.state.store import StateStore
from specd.tasks.project import Project

if TYPE_CHECKING:  # typing only: dispatch and machinery import nothing of the loop either
    from specd.agents.base import Usage
    from specd.engine.dispatch import Dispatcher
    from specd.engine.machinery import Machinery


class Stop(Exception):
    """Ends the loop with a status; the state is saved and the run can be resumed."""

    def __init__(self, status: str, reason: str, wait: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.waiting = status, reason, wait


class Loop(Protocol):
    project: Project
    task: str
    config: PipelineConfig
    human: Human
    events: EventBus
    store: StateStore
    dispatcher: Dispatcher
    state: RunState
    last: bool  # the step running is the last this run may take (SPECD_STEPS): its commit waits for the run's end

    @property
    def machinery(self) -> Machinery: ...

    def spend(self, usage: Usage) -> None: ...

    def budget_stop(self, reason: str, frame: Frame, step: Step, next_call: float = 0.0) -> None: ...
