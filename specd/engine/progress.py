"""Where a step stands in the plan: "step k of N", for the live line and `specd status TASK`.

N counts the steps of the open pipeline iterations (the main pipeline, and the
current phase's steps inside a phase loop): those done in them plus those still
to run. It is the plan as the file says now, so an edit or a fix phase can move N.
"""

from __future__ import annotations

from specd.engine import cursor
from specd.pipeline.model import PipelineConfig
from specd.state.model import RunState


def step_of(state: RunState, config: PipelineConfig) -> tuple[int, int] | None:
    """(k, N) for the step the cursor is at, or None when the cursor is not on a step of this file."""
    done = left = 0
    for depth, frame in enumerate(reversed(state.cursor)):
        order = cursor.names(config, frame.pipeline)
        if frame.step not in order:
            return None
        # a reference to another pipeline is not a step of its own: its steps count once the loop enters it
        steps = [s for s in config.steps(frame.pipeline) if s.enabled and not s.pipeline]
        enabled, finished = {s.name for s in steps}, set(frame.done)
        done += len(enabled & finished)
        # an outer frame sits on the reference that holds the inner pipeline: that step is not one to count
        start = order.index(frame.step) + (0 if depth == 0 else 1)
        # by rank and set, not list.index and list membership: those made a step of a long pipeline cost
        # the square of its length
        rank = {name: i for i, name in enumerate(order)}
        left += sum(1 for s in steps if rank[s.name] >= start and s.name not in finished)
    if left == 0:
        return None
    return done + 1, done + left
