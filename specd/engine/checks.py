"""A step's checks: run after the agent, handed back to it when one fails, until they pass or attempts run out.

The "checks" stage (state/model.py STAGES) follows the step stage. Each round of checks is one history row
of kind "checks" holding every result; it is saved before anything acts on it. So a run killed during a
check runs that check again on resume, and neither a finished agent run (its own row) nor a recorded round
is ever repeated. A failed round sends the step stage round again with the failure in the prompt
(``feedback``); after the last attempt the step's outcome is ``checks_failed``, routed by the step's
``outcomes`` like any other, or, when the file routes it nowhere, a held wait a person answers.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from typing import Any

from specd.agents.command import specd_env
from specd.agents.proc import run_group, transcript_path
from specd.engine import records
from specd.engine.failures import failure_stop
from specd.engine.loop import Loop, Stop
from specd.engine.machinery import Tampered
from specd.engine.waiting import waiting
from specd.pipeline.model import DEFAULT_HOOK_TIMEOUT, HookSpec, Step
from specd.pipeline.step_checks import OUTCOME, attempts_of
from specd.redact import redact
from specd.state.model import Current, Frame
from specd.state.rounds import KIND, failing, last_round, why
from specd.state.store import Heartbeat

OUTPUT_CHARS = 3000  # of each check's output, kept in its row and given back to the agent: the end, where
# test runners print their summary


def run(brain: Loop, frame: Frame, step: Step, cur: Current, again: Callable[[], None]) -> None:
    """The checks stage: returns once a round passes or the outcome is a routed ``checks_failed``; ``again``
    runs the step stage once more. Raises Stop for the held wait."""
    if not step.checks or step.target(cur.outcome or "done") in ("stop", "fail"):
        return  # the agent itself asked for a human, or failed the step: nothing to check
    limit = attempts_of(step.attempts)
    while True:
        row = last_round(brain.state, cur)
        if row is None:  # this attempt's round was not recorded yet (or the run was killed during it)
            brain.store.save(brain.state)  # the agent's row is durable before a check reads its work
            row = _round(brain, frame, step, cur, limit)
            brain.state.history.append(row)
            if row["outcome"] == "failed":  # same save as the row: the step stage runs again on resume
                cur.completed.remove("step")
            brain.store.save(brain.state)
            brain.events.emit("notice", step=step.name, message=row["summary"])
        if row["outcome"] == "passed":
            return
        if row["outcome"] == "failed":
            again()
            continue
        cur.outcome, cur.summary = OUTCOME, row["summary"]
        if OUTCOME in step.outcomes:
            return
        bad = failing(row)
        raise Stop("WAITING_FOR_HUMAN", f"{row['summary']}; the step waits for you: `specd approve {_q(brain)}` "
                   f"runs it again ({limit} more attempts), `specd reject {_q(brain)} --note TEXT` runs it again "
                   f"with your note, `specd skip {_q(brain)}` goes on without it",
                   waiting(OUTCOME, frame, step, check=bad.get("run"), exit_status=bad.get("status"),
                           attempts=limit))


def _round(brain: Loop, frame: Frame, step: Step, cur: Current, limit: int) -> dict[str, Any]:
    """Run the checks in order, stopping at the first failure (the one the agent is told about)."""
    results: list[dict[str, Any]] = []
    # recorded like a hook: what the step's code made when a check ran it is held, committed or said as its own
    brain.events.emit("checks_started", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                      round=cur.checked + 1)
    try:
        with Heartbeat(brain.store.heartbeat_path), brain.machinery.watch(brain.events, f"checks of {step.name!r}"):
            for spec in step.checks:
                results.append(_check(brain, frame, step, spec, cur.checked + 1))
                if not results[-1]["ok"]:
                    break
    except Tampered as exc:
        raise Stop(*failure_stop(brain.state, cur, f"checks of step {step.name!r} {exc}", kind="step",
                                 task=brain.task)) from None
    finally:
        brain.events.emit("checks_finished", step=step.name, pipeline=frame.pipeline, phase=frame.phase,
                          ok=all(r["ok"] for r in results))
    n = cur.checked + 1
    if all(r["ok"] for r in results):
        outcome, summary = "passed", f"checks passed (attempt {n} of {limit})"
    else:
        cur.checked = n
        outcome = "failed" if n < limit else OUTCOME
        summary = (f"check `{results[-1]['run']}` {why(results[-1])} (attempt {n} of {limit})"
                   + ("; the step runs again with its output" if n < limit else f"; outcome {OUTCOME}"))
    return records.entry(cur, kind=KIND, outcome=outcome, summary=summary, round=n, of=limit, checks=results)


def _check(brain: Loop, frame: Frame, step: Step, spec: HookSpec, n: int) -> dict[str, Any]:
    assert spec.run is not None
    d = brain.dispatcher
    timeout = spec.timeout or DEFAULT_HOOK_TIMEOUT
    log = transcript_path(d.task_dir, d.run_id, f"{step.name}-check", ".log")
    env = {**os.environ, **specd_env(task=d.task, task_dir=d.task_dir, step=step.name, pipeline=frame.pipeline,
                                     phase=frame.phase, kind="check", mode=d.mode, workflow="", result="",
                                     run_id=d.run_id, attempt=n)}
    started = time.monotonic()
    done = run_group(spec.run, cwd=d.project.root, env=env, stdin=None, log=log, timeout=timeout,
                     jail=spec.jail.within(d.task_dir))
    return {"run": spec.run, "ok": done.returncode == 0 and not done.timed_out, "status": done.returncode,
            "timed_out": done.timed_out, "timeout": timeout, "seconds": round(time.monotonic() - started, 3),
            "output": redact(done.tail(OUTPUT_CHARS))}


def _q(brain: Loop) -> str:
    return shlex.quote(brain.task)


def again(cur: Current, note: str) -> None:
    """An approved ``checks_failed`` wait: the step runs again from its agent, with as many attempts as at first
    (the last failed round stays the latest, so its output is in the prompt, and so is the approver's note)."""
    cur.completed = [stage for stage in cur.completed if stage not in ("step", KIND)]
    cur.checked, cur.outcome = 0, None
    if note.strip():
        cur.note = note
