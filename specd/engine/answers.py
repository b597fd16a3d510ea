"""A human's answer to a waiting run: approve, reject, skip.

Each answer is one checkpoint row (state/checkpoint.py: what, where, and who from where) and moves the
run as the waiting record says; the next `specd continue` acts on it. Nothing runs here.
"""

from __future__ import annotations

from typing import Any

from specd.engine import gates
from specd.engine.waiting import held
from specd.errors import UsageError
from specd.pipeline import cursor
from specd.pipeline.model import PipelineConfig
from specd.state import checkpoint
from specd.state.checkpoint import Origin
from specd.state.model import Frame, RunState

FILES = ("secret", "hidden")  # waits on files a step left: an approval is of their content then

ANSWERS = ("approve", "reject", "skip")


def answer(state: RunState, config: PipelineConfig, verb: str, note: str, origin: Origin) -> str:
    """Apply ``verb`` to what ``state`` waits on, recorded as given by ``origin``; returns a sentence saying
    what happens next."""
    wait = dict(state.waiting or {})
    if not held(state) and state.answered and state.status == "IN_PROGRESS":
        raise UsageError(f"task {state.task!r} was answered already ({state.answered}); no run has taken that "
                         "answer up yet, so there is nothing else to answer",
                         fix=f"`specd continue {state.task}` goes on with it; answer again when it next waits")
    if not held(state):
        raise UsageError(f"task {state.task!r} is not waiting for an answer (status {state.status})",
                         fix=f"see `specd status {state.task}`")
    kind, name = wait["kind"], str(wait["step"])
    frame = _frame(state, wait)
    if verb == "approve":
        said = _approve(state, frame, wait, note)
        if kind == "gate" and not _enabled(config, frame.pipeline, name):
            said = f"step {name!r} is disabled in the pipeline file now: the run passes it by and goes on after it"
        elif kind == "gate" and config is not None and name not in cursor.names(config, frame.pipeline):
            said = (f"step {name!r} is no longer in the pipeline file (renamed or removed): the approval is "
                    f"recorded, and the run goes on where the file says now, whose own gate asks again if it has "
                    f"one (`specd status {state.task}` names the step)")
    elif verb == "reject":
        if not note.strip():
            raise UsageError("reject needs a note saying what to change", fix="add --note 'what is wrong'")
        said = _reject(state, config, frame, wait, note)
    elif kind == "outcome":
        raise UsageError(f"step {name!r} already finished; there is nothing to skip",
                         fix=f"`specd approve {state.task}` goes on, or `specd reject {state.task} --note TEXT`")
    elif kind == "hidden":
        raise UsageError(f"step {name!r} already ran; skipping would not take out what it hid from git",
                         fix=f"look at the files named, then `specd approve {state.task}` goes on, or `specd reject "
                             f"{state.task} --note TEXT` runs the step again")
    elif kind == "secret":
        raise UsageError(f"the files step {name!r} changed are written; skipping would not take the secrets out",
                         fix=f"`specd approve {state.task}` commits them as they are, `specd reject {state.task} "
                             "--note TEXT` runs the step again")
    else:
        gates.skip(state, config, frame, config.step(frame.pipeline, name), "skipped by `specd skip`")
        state.current = None
        said = f"step {name!r} counts as finished (outcome done); the run goes on from there"
    checkpoint.record(state, origin, verb, name, note, pipeline=wait.get("pipeline"), phase=wait.get("phase"),
                      waiting=kind, **({"files": [{k: v for k, v in f.items() if k != "seen"} for f in
                                                  wait.get("files") or ()]} if kind in FILES else {}))
    state.status, state.waiting, state.answered = "IN_PROGRESS", None, verb
    state.reason = f"answered ({verb}); `specd continue {state.task}` goes on"
    return said


def _enabled(config: PipelineConfig | None, pipeline: str, name: str) -> bool:
    """False for a step the (readable) pipeline file now turns off; an approval needs no file (control.edit)."""
    return config is None or name not in cursor.names(config, pipeline) or config.step(pipeline, name).enabled


def _frame(state: RunState, wait: dict[str, Any]) -> Frame:
    top = state.cursor[-1] if state.cursor else None
    if top is None or (top.pipeline, top.phase) != (wait.get("pipeline"), wait.get("phase")):
        raise UsageError(f"the run of {state.task!r} is no longer where it waited ({wait.get('pipeline')})",
                         fix=f"`specd continue {state.task}` shows where it stands")
    return top


def _approve(state: RunState, frame: Frame, wait: dict[str, Any], note: str) -> str:
    kind, name = wait["kind"], str(wait["step"])
    if kind == "gate":
        state.answer = {"answer": "approve", "step": name, "pipeline": frame.pipeline, "phase": frame.phase,
                        "note": note}
        return f"step {name!r} runs when the task goes on"  # the next line says who goes on with it
    if kind == "max_visits":
        frame.visits[name] = 0
        return f"step {name!r} may run {wait.get('limit')} more times in this iteration"
    if kind == "budget":
        return "the run goes on if the budget now allows it (raise agent.max_cost_usd, or pass --max-cost)"
    if kind == "failure_cluster":  # the interrupted step stays current: continue runs it again
        return f"step {name!r} runs again when the task goes on ({wait.get('limit')} more tries)"
    if kind == "checks_failed" and state.current is not None:  # the step stays current: it runs again
        from specd.engine.checks import again  # here: answering must not load what running a check needs

        again(state.current, note)
        return (f"step {name!r} runs again when the task goes on ({wait.get('attempts')} more attempts, the failing "
                "check in its prompt)")
    if kind == "hidden":  # approved as they are now: a file changed since is held again
        files = [str(f.get("path")) for f in wait.get("files") or ()]
        stay = "stays as it is" if len(files) == 1 else "stay as they are"
        return f"{', '.join(files)} {stay}, out of git, and the run goes on after {name!r}"
    if kind == "secret":  # the checkpoint row names the files and their content: see answered_files
        paths = ", ".join(str(f.get("path")) for f in wait.get("files") or ())
        return (f"{paths} will be committed as they are when the task goes on (a file changed since is checked "
                "again)")
    return f"the run goes on after {name!r}"


def _reject(state: RunState, config: PipelineConfig, frame: Frame, wait: dict[str, Any], note: str) -> str:
    name = str(wait["step"])
    step = config.step(frame.pipeline, name)
    # A held secret or failed checks are the step's own doing: the step itself runs again, told what to change.
    own = wait["kind"] in (*FILES, "checks_failed")
    target = name if own else step.on_reject or cursor.previous(config, frame.pipeline, name)
    if target is None or target not in cursor.names(config, frame.pipeline):
        raise UsageError(f"step {name!r} has no step before it in {frame.pipeline} to send the run back to",
                         fix=f"set \"on_reject\" on step {name!r} in {config.source}, or `specd skip {state.task}`")
    cursor.reopen(frame, cursor.names(config, frame.pipeline), target)
    state.current = None
    state.answer = {"answer": "reject", "step": target, "pipeline": frame.pipeline, "phase": frame.phase,
                    "note": note}
    return f"step {target!r} runs again when the task goes on, with your note in its prompt"


def answered_files(state: RunState, answer: str) -> list[dict[str, str]]:
    """For the recorder: with ``answer`` "approve", the files held for a secret or hidden from git that a person let
    through (path and content digest); with "reject", the files hidden from git a person turned down."""
    kinds = FILES if answer == "approve" else ("hidden",)
    return [dict(f) for row in state.checkpoints if row.get("waiting") in kinds and row.get("answer") == answer
            for f in row.get("files") or ()]
