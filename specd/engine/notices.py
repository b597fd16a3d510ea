"""One message when a run stops to wait for a human or fails, through the `notify:` block's targets.

A wait is told once: what was sent is recorded in the run state (``notified``), so `specd continue` run
again on the same wait (it asks the same gate again, or stops at once) sends nothing new. A wait is known
by the run, its kind and place, and how many steps had finished; a failure also by the step's attempt, so
a step that fails again after a retry is news. Sending never fails the run: a target that does not take
the message is a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from specd.engine.waiting import answers_text, hint, what
from specd.events import EventBus
from specd.notify.send import Message, send
from specd.notify.spec import NotifySpec
from specd.redact import redact
from specd.state.model import RunState

KEPT = 50  # keys remembered: enough for every wait a run can hold open, bounded for a run of months
REASON_CHARS = 600  # a failure's reason may end with pages of agent output: the message keeps its start


def event_of(state: RunState) -> str | None:
    if state.status == "WAITING_FOR_HUMAN":
        return "waiting"
    if state.status in ("BLOCKED", "FAILED"):
        return "failed"
    return None


def key_of(state: RunState) -> str:
    wait = state.waiting or {}
    cur = state.current
    place = (wait.get("kind"), wait.get("pipeline"), wait.get("step"), wait.get("phase")) if wait else \
        (None, cur.pipeline, cur.step, cur.phase) if cur else (None, None, None, None)
    attempt = cur.attempt if cur and state.status != "WAITING_FOR_HUMAN" else 0
    return ":".join(map(str, (state.run_id, state.status, *place, len(state.history), attempt)))


def message(task: str, state: RunState, event: str, page: str | None = None) -> Message:
    answer = hint(task, state)
    link = f"\nOpen: {page}/tasks/{quote(task)}" if page else ""  # the page asks for its token, never sent here
    wait = state.waiting or {}
    step = wait.get("step") or (state.current.step if state.current else None)
    phase = wait.get("phase") or (state.current.phase if state.current else None)
    if event == "waiting":
        title = f"specd: task {task} is waiting for you"
        body = f"Task {task!r} is waiting for {what(state)}.\nAnswer: {answer}\nAll answers: {answers_text(task)}" \
            + link
    else:
        reason = state.reason if len(state.reason) <= REASON_CHARS else state.reason[:REASON_CHARS] + " …"
        title = f"specd: task {task} is {state.status}"
        body = f"Task {task!r} is {state.status}" + (f" at step {step!r}" if step else "") + \
            f": {reason}\nNext: {answer or '(nothing to run)'}" + link
    return Message(event=event, task=task, status=state.status, title=redact(title), body=redact(body),
                   answer=redact(answer), step=step, phase=phase)


def notify(spec: NotifySpec | None, task: str, state: RunState, *, root: Path, task_dir: Path, events: EventBus,
           save: Callable[[], None]) -> bool:
    """Send the message for where ``state`` stopped, unless it was sent already; True when one was sent."""
    event = event_of(state)
    if spec is None or event is None or event not in spec.on:
        return False
    key = key_of(state)
    if key in state.notified:
        return False
    message_of = message(task, state, event, spec.page)
    sent, warnings = send(spec, message_of, root=root, task_dir=task_dir, run_id=state.run_id)
    for text in warnings:
        events.emit("warning", message=text)
    if not sent:
        return False  # nobody got it: the next stop on this wait may try again
    state.notified = [*state.notified, key][-KEPT:]
    save()
    events.emit("notice", message=f"sent a notification to {sent} target(s): {message_of.title}")
    return True
