"""Keeping the run's position when the pipeline file changed between runs.

The run remembers the step names of every pipeline as it last saw them
(``state.shape``). When the file changed, each frame of the cursor whose
pipeline changed is re-planned: it goes on with the first step, in the new
file order, that has not finished in this iteration. What changed and where
the run goes on is reported, so nothing is skipped or repeated silently.
"""

from __future__ import annotations

from specd.errors import TaskError
from specd.pipeline import cursor
from specd.pipeline.model import PipelineConfig
from specd.state.model import Frame, RunState


def migrate(state: RunState, config: PipelineConfig) -> None:
    """States saved before positions were names kept an index into the pipeline as it is now."""
    for frame in state.cursor:
        if frame.index is None:
            continue
        if frame.pipeline in config.pipelines:
            order = cursor.names(config, frame.pipeline)
            frame.step = order[frame.index] if frame.index < len(order) else None
            frame.done = order[:frame.index]
        frame.index = None


def replan(state: RunState, config: PipelineConfig, since: str = "the last run") -> list[str]:
    """Re-plan the cursor for an edited pipeline; returns the notices to show (none if unchanged)."""
    migrate(state, config)
    _check_pipelines(state, config)
    old, new = state.shape, {name: cursor.names(config, name) for name in config.pipelines}
    notices: list[str] = []
    if state.pipeline_digest and state.pipeline_digest != config.digest:
        notices += _fix_stack(state, config, old, new)
        changes = [f"{name}: {text}" for name in new if (text := "; ".join(
            part for part in (describe(old.get(name), new[name]), _disabled(state, config, name)) if part))]
        head = f"the pipeline file changed since {since}"
        notices.insert(0, head + (": " + "; ".join(changes) if changes and old else ""))
    state.shape = new
    return notices


def _check_pipelines(state: RunState, config: PipelineConfig) -> None:
    """A cursor naming a pipeline the file never defined (the file is unchanged, so the state is damaged)."""
    if state.pipeline_digest and state.pipeline_digest != config.digest:
        return  # an edited file: _fix_stack says which pipeline went missing, and how to go on
    for i, frame in enumerate(state.cursor):
        if frame.pipeline not in config.pipelines:
            raise TaskError(f"task {state.task!r}: .pipeline-state.json: cursor[{i}].pipeline is {frame.pipeline!r}, "
                            f"which {config.source} does not define (known: {', '.join(config.pipelines)})",
                            fix=f"restore the run state from git, or start the run again from a step with "
                                f"`specd rerun {state.task} --from STEP`")


def _fix_stack(state: RunState, config: PipelineConfig, old: dict[str, list[str]],
               new: dict[str, list[str]]) -> list[str]:
    notices: list[str] = []
    stack = state.cursor
    for depth, frame in enumerate(list(stack)):
        if frame.pipeline not in config.pipelines:
            del stack[depth:]
            raise TaskError(f"the run is inside pipeline {frame.pipeline!r}, which {config.source} no longer "
                            "defines", fix=f"add pipeline {frame.pipeline!r} back, or restart from a step with "
                                           f"`specd rerun {state.task} --from STEP`")
        order = new[frame.pipeline]
        child = stack[depth + 1] if depth + 1 < len(stack) else None
        if child is not None and _still_runs(config, frame, child):
            skipped = [n for n in order[:order.index(frame.step or "")] if n not in frame.done]
            if skipped and old.get(frame.pipeline) != order:
                notices.append(f"{', '.join(skipped)} in {frame.pipeline} come before {frame.step!r}, which is "
                               f"in progress, so this iteration will not run them; `specd rerun {state.task} "
                               f"--from {skipped[0]}` would")
            continue
        if child is not None:
            del stack[depth + 1:]
        if old.get(frame.pipeline) == order and frame.step in order:
            break  # this pipeline kept its steps: its position stands as it is
        was = frame.step
        frame.step = cursor.first_open(order, frame.done)
        if was is not None and was not in order:
            notices.append(f"step {was!r} of {frame.pipeline}, where the run stood, was removed")
        break
    top = stack[-1] if stack else None
    if top is not None:
        where, passing = _onward(config, top)
        notices.append(f"the run goes on at {where} in {top.pipeline}" + (f", phase {top.phase}" if top.phase else "")
                       + passing)
    return notices


def _onward(config: PipelineConfig, top: Frame) -> tuple[str, str]:
    """Where the run goes on in ``top``'s pipeline (its cursor's step, or the first enabled one after it when that
    one is disabled), and the disabled steps it passes by on the way."""
    order = cursor.names(config, top.pipeline)
    if top.step is None or top.step not in order or config.step(top.pipeline, top.step).enabled:
        return (repr(top.step) if top.step else "the end"), ""
    passed: list[str] = []
    for name in order[order.index(top.step):]:
        if name in top.done:
            continue
        if config.step(top.pipeline, name).enabled:
            return repr(name), f" (passing by {', '.join(passed)}: disabled)"
        passed.append(name)
    return "the end", f" (passing by {', '.join(passed)}: disabled)"


def _still_runs(config: PipelineConfig, frame: Frame, child: Frame) -> bool:
    """A parent frame keeps its place while the child it started still matches the file."""
    if frame.step not in cursor.names(config, frame.pipeline):
        return False
    return config.step(frame.pipeline, frame.step or "").pipeline == child.pipeline


def _disabled(state: RunState, config: PipelineConfig, pipeline: str) -> str:
    """The steps of ``pipeline`` that are off (``enabled: false``) and not finished where the run stands in it:
    the run will pass them by, which a list of names moved, added or removed would not say."""
    done = {name for frame in state.cursor if frame.pipeline == pipeline for name in frame.done}
    off = [step.name for step in config.steps(pipeline) if not step.enabled and step.name not in done]
    return f"disabled (passed by) {', '.join(off)}" if off else ""


def describe(before: list[str] | None, after: list[str]) -> str:
    if before is None or before == after:
        return ""
    added = [n for n in after if n not in before]
    removed = [n for n in before if n not in after]
    kept_before = [n for n in before if n in after]
    kept_after = [n for n in after if n in before]
    moved = [n for i, n in enumerate(kept_after) if kept_before[i] != n]
    parts = [f"{label} {', '.join(items)}" for label, items in
             (("added", added), ("removed", removed), ("moved", moved)) if items]
    return "; ".join(parts)
