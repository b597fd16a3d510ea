"""Moving the cursor stack through nested pipelines and phase loops.

The stack's top frame points at the step to run. A frame whose index points
at a pipeline reference has a child frame above it running that pipeline;
when the child runs off its end, ``settle`` pops it and either starts the
next phase (``foreach: phases``) or moves the parent on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from specd.phases import Phase
from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame, RunState

NextPhase = Callable[[str | None], Phase | None]


class NoPhases(Exception):
    """A ``foreach: phases`` step found no phases: a human must look at the roadmap."""

    def __init__(self, step: str) -> None:
        super().__init__(step)
        self.step = step


@dataclass(frozen=True)
class Position:
    frame: Frame
    step: Step


def settle(state: RunState, config: PipelineConfig, next_phase: NextPhase) -> Position | None:
    """Descend/ascend until the top frame points at a workflow step; None when the run is done."""
    stack = state.cursor
    while stack:
        frame = stack[-1]
        steps = config.steps(frame.pipeline)
        if frame.index >= len(steps):
            stack.pop()
            if not stack:
                return None
            parent = stack[-1]
            ref = config.steps(parent.pipeline)[parent.index]
            if ref.foreach == "phases" and frame.phase is not None:
                if frame.phase not in state.phases_completed:
                    state.phases_completed.append(frame.phase)
                following = next_phase(frame.phase)
                if following:
                    stack.append(Frame(ref.pipeline or "", 0, following.id))
                    continue
            parent.index += 1
            continue
        step = steps[frame.index]
        if step.pipeline is None or not step.enabled:
            return Position(frame, step)
        if step.foreach == "phases":
            first = next_phase(None)
            if first is None:
                raise NoPhases(step.name)
            stack.append(Frame(step.pipeline, 0, first.id))
        else:
            stack.append(Frame(step.pipeline, 0, frame.phase))
    return None


def peek(state: RunState, config: PipelineConfig, next_phase: NextPhase) -> Position | None:
    """Where `continue` would go next, without moving the real cursor."""
    return settle(copy.deepcopy(state), config, next_phase)


def route(frame: Frame, config: PipelineConfig, step: Step, target: str) -> None:
    """Move within the frame's pipeline: next, end, repeat, or a jump to a named step."""
    steps = config.steps(frame.pipeline)
    if target == "next":
        frame.index += 1
    elif target == "end":
        frame.index = len(steps)
    elif target == "repeat":
        pass
    else:
        frame.index = config.index_of(frame.pipeline, target)


def back(frame: Frame, config: PipelineConfig) -> bool:
    """Move to the previous enabled step of this pipeline; False if there is none."""
    steps = config.steps(frame.pipeline)
    for index in range(frame.index - 1, -1, -1):
        if steps[index].enabled:
            frame.index = index
            return True
    return False
