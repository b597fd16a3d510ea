"""Moving the cursor stack through nested pipelines and phase loops, by step name.

The stack's top frame names the step to run. A frame that names a pipeline
reference has a child frame above it running that pipeline; when the child
runs off its end, ``settle`` pops it and either starts the next phase
(``foreach: phases``) or moves the parent on.

Routing rule (the same in every frame): ``next`` is the first step after the
current one, in file order, that has not finished in this iteration. So an
edited file re-plans cleanly: nothing finished runs again, nothing unrun is
passed over.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame, RunState
from specd.tasks.phases import Phase

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


def names(config: PipelineConfig, pipeline: str) -> list[str]:
    return config.names(pipeline)


def fresh(config: PipelineConfig, pipeline: str, phase: str | None) -> Frame:
    """A new iteration of ``pipeline``, pointing at its first step."""
    return Frame(pipeline, names(config, pipeline)[0], phase)


def start(config: PipelineConfig) -> list[Frame]:
    return [fresh(config, "main", None)]


def first_open(order: list[str], done: list[str], after: str | None = None) -> str | None:
    """The first step not finished in this iteration, after ``after`` in file order (or from the top)."""
    begin = order.index(after) + 1 if after in order else 0
    return next((name for name in order[begin:] if name not in done), None)


def settle(state: RunState, config: PipelineConfig, next_phase: NextPhase) -> Position | None:
    """Descend/ascend until the top frame points at a workflow step; None when the run is done."""
    stack = state.cursor
    while stack:
        frame = stack[-1]
        order = names(config, frame.pipeline)
        if frame.step is not None and (frame.step not in order or frame.step in frame.done):
            frame.step = first_open(order, frame.done, frame.step if frame.step in order else None)
        if frame.step is None:
            stack.pop()
            if not stack:
                return None
            parent = stack[-1]
            ref = config.step(parent.pipeline, parent.step or "")
            if ref.foreach == "phases" and frame.phase is not None:
                if frame.phase not in state.phases_completed:
                    state.phases_completed.append(frame.phase)
                following = next_phase(frame.phase)
                if following:
                    stack.append(fresh(config, ref.pipeline or "", following.id))
                    continue
            finish(parent, ref.name)
            route(parent, config, ref, "next")
            continue
        step = config.step(frame.pipeline, frame.step)
        if step.pipeline is None or not step.enabled:
            return Position(frame, step)
        if step.foreach == "phases":
            first = next_phase(None)
            if first is None:
                raise NoPhases(step.name)
            stack.append(fresh(config, step.pipeline, first.id))
        else:
            stack.append(fresh(config, step.pipeline, frame.phase))
    return None


def peek(state: RunState, config: PipelineConfig, next_phase: NextPhase) -> Position | None:
    """Where `continue` would go next, without moving the real cursor: a disabled step is passed by, as the run
    passes it."""
    probe = copy.deepcopy(state)
    while (pos := settle(probe, config, next_phase)) is not None and not pos.step.enabled:
        route(pos.frame, config, pos.step, "next")
    return pos


def finish(frame: Frame, name: str) -> None:
    if name not in frame.done:
        frame.done.append(name)


def route(frame: Frame, config: PipelineConfig, step: Step, target: str) -> None:
    """Move within the frame's pipeline: next, end, repeat, or a jump to a named step.

    A jump re-opens its target and every step after it, so revise → execute runs
    execute and review again.
    """
    order = names(config, frame.pipeline)
    if target == "next":
        frame.step = first_open(order, frame.done, step.name)
    elif target == "end":
        frame.step = None
    elif target != "repeat":
        reopen(frame, order, target)


def reopen(frame: Frame, order: list[str], target: str) -> None:
    later = set(order[order.index(target):])
    frame.done = [name for name in frame.done if name not in later]
    frame.step = target


def back(frame: Frame, config: PipelineConfig) -> bool:
    """Move to the previous enabled step of this pipeline; False if there is none."""
    steps = config.steps(frame.pipeline)
    order = [s.name for s in steps]
    here = order.index(frame.step) if frame.step in order else len(order)
    for index in range(here - 1, -1, -1):
        if steps[index].enabled:
            reopen(frame, order, order[index])
            return True
    return False


def previous(config: PipelineConfig, pipeline: str, name: str) -> str | None:
    """The enabled step before ``name`` in file order: the default `on_reject` target."""
    steps = config.steps(pipeline)
    order = [s.name for s in steps]
    return next((s.name for s in reversed(steps[:order.index(name)]) if s.enabled and s.workflow), None)
