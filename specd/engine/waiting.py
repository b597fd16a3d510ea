"""What a stopped run waits for, recorded as the loop holds it, and how it is worded.

Which waits are held and the hint that moves a run on live below the engine (``specd.state.waits``, read by
`status` too); they are named here as well, so the engine's callers have one place to import them from.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from specd.pipeline.model import PipelineConfig, Step
from specd.state.model import Frame, RunState
from specd.state.waits import HELD, held, hint, raised_budget
from specd.tasks.home import main_of
from specd.tasks.project import Project

__all__ = ["HELD", "answers_text", "held", "hint", "no_phases", "raised_budget", "release_if_gone", "waiting", "what"]


def waiting(kind: str, frame: Frame, step: Step, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "step": step.name, "pipeline": frame.pipeline, "phase": frame.phase, **extra}


def no_phases(step: str, task: str, project: Project, task_dir: Path) -> str:
    """Why a ``foreach: phases`` step cannot start, naming the roadmap to edit as seen from the main tree: a task
    `specd run` put in a worktree reads the worktree's copy, never the main tree's."""
    roadmap = main_of(project).rel(task_dir / "ROADMAP.md")
    return (f"step {step!r} runs once per phase, but ROADMAP.md and phases/ list none; add `### Phase 1: ...` "
            f"headings to {roadmap}, then `specd continue {task}`")


def release_if_gone(state: RunState, config: PipelineConfig) -> str | None:
    """A wait on a step the edited pipeline no longer has cannot be answered: it lapses, and says so."""
    wait = state.waiting or {}
    if not held(state) or wait.get("step") in [s.name for s in config.pipelines.get(str(wait.get("pipeline")), ())]:
        return None
    state.status, state.waiting = "IN_PROGRESS", None
    return f"the run waited at step {wait.get('step')!r} of {wait.get('pipeline')}, which the pipeline file no " \
           "longer has; that wait is over"


def what(state: RunState) -> str:
    """One line: what the run waits for, and where."""
    wait = state.waiting or {}
    where = f"{wait.get('step')!r}" + "".join(
        f" ({part})" for part in (f"pipeline {wait['pipeline']}" if wait.get("pipeline") not in (None, "main")
                                  else "", f"phase {wait['phase']}" if wait.get("phase") else "") if part)
    return {
        "gate": f"the gate before {where}",
        "outcome": f"a decision on the outcome {wait.get('outcome')!r} of {where}",
        "max_visits": f"a decision on {where}, which reached max_visits ({wait.get('limit')})",
        "budget": f"more budget before {where}",
        "failure_cluster": f"a decision on {where}, which failed the same way {wait.get('count')} times",
        "checks_failed": f"a decision on {where}, whose check `{wait.get('check')}` still failed after "
                         f"{wait.get('attempts')} attempts",
        "secret": f"a decision on files changed at {where} that hold secrets ("
                  + ", ".join(str(f.get("path")) for f in wait.get("files") or ()) + ")",
        "hidden": f"a look at the files {where} hid from git ("
                  + ", ".join(str(f.get("path")) for f in wait.get("files") or ()) + ")",
        "no_phases": f"phases to run: {where} runs once per phase, and ROADMAP.md lists none yet",
    }.get(str(wait.get("kind")), f"a person to look at {where}")


def answers_text(task: str, go_on: bool = True) -> str:
    """The commands that answer a waiting task; ``go_on=False`` leaves out `continue --approve`, for a task
    that runs elsewhere (on Temporal, where an answer is a signal and a worker goes on)."""
    name = shlex.quote(task)
    if not go_on:
        return f"`specd approve {name} [--note TEXT]`, `specd reject {name} --note TEXT` or `specd skip {name}`"
    return (f"`specd approve {name} [--note TEXT]`, `specd reject {name} --note TEXT`, `specd skip {name}`, "
            f"or `specd continue {name} --approve` to answer and go on in one command")
