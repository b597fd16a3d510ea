"""Where a step stands in the plan: "step k of N", for the live line and `specd status TASK`.

N counts every step of the plan the run follows, flattened: the main pipeline's steps, a nested pipeline's
steps in place of the step that names it, and a phase loop's steps once per phase (the phases the roadmap
lists, never fewer than those done and the one running). k counts the steps before this one in that same
plan, the finished phases' steps included, so k and N agree at every depth: `a` 1 of 6, `b` 2 of 6, `e` 6
of 6 over a three-level nesting, and phase 2's execute 9 of 15 in a three-phase loop of four steps.

It is the plan as the file says now, so an edit, a new phase in the roadmap or a fix phase can move N.
A step routed past (review approving, so revise does not run) still counts in the plan it is part of.
"""

from __future__ import annotations

from specd.pipeline import cursor
from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import RunState


def step_of(state: RunState, config: PipelineConfig, phases: int | None = None) -> tuple[int, int] | None:
    """(k, N) for the step the cursor is at, or None when the cursor is not on a step of this file.
    ``phases``: how many phases the roadmap lists, when the caller knows."""
    done = left = 0
    loops = _loops(state, phases)
    last = len(state.cursor) - 1
    for depth, frame in enumerate(state.cursor):  # outermost first
        order = cursor.names(config, frame.pipeline)
        if frame.step not in order:
            return None
        # by rank and set, not list.index and list membership: those made a step of a long pipeline cost the
        # square of its length
        rank = {name: i for i, name in enumerate(order)}
        here, finished = rank[frame.step], set(frame.done)
        for step in (s for s in config.steps(frame.pipeline) if s.enabled):
            at = rank[step.name]
            if step.name in finished:
                done += _weight(config, step, loops, len(state.phases_completed))
            elif at == here and depth < last:  # the reference the inner frame runs: its other iterations
                if step.foreach == "phases":
                    size = _size(config, str(step.pipeline), loops, ())
                    done += size * len(state.phases_completed)
                    left += size * max(0, loops - len(state.phases_completed) - 1)
            elif at >= here:
                left += _weight(config, step, loops, max(0, loops - len(state.phases_completed)))
    if left == 0:
        return None
    return done + 1, done + left


def _loops(state: RunState, phases: int | None) -> int:
    """How many times the phase loop runs: the roadmap's phases, at least those done and the current one."""
    inside = 1 if any(frame.phase is not None for frame in state.cursor) else 0
    return max(phases or 0, len(state.phases_completed) + inside, 1)


def _weight(config: PipelineConfig, step: Step, loops: int, times: int) -> int:
    """How many plan steps ``step`` stands for: 1, or its pipeline's (``times`` over, for a phase loop)."""
    if not step.pipeline:
        return 1
    return _size(config, step.pipeline, loops, ()) * (times if step.foreach == "phases" else 1)


def _size(config: PipelineConfig, pipeline: str, loops: int, seen: tuple[str, ...]) -> int:
    if pipeline in seen or pipeline not in config.pipelines:  # a cycle is refused at load; never loop here
        return 0
    return sum(1 if not s.pipeline else _size(config, s.pipeline, loops, (*seen, pipeline))
               * (loops if s.foreach == "phases" else 1) for s in config.steps(pipeline) if s.enabled)
