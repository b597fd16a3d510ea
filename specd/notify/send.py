"""Sending one message to the targets of a `notify:` block: apprise URLs, and a command run in the jail.

apprise (desktop, chat, mail, webhooks) is imported only here, only when a message is sent: a run that
never waits or fails, and every read-only command, pays nothing for it. Nothing here raises for a target
that fails: the caller gets warnings, since a failed message must never fail the step it reports on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from specd.agents.proc import run_group, transcript_path
from specd.notify.spec import NotifySpec
from specd.redact import redact
from specd.system.visible import bidi_shown

TAIL = 500  # characters of a failed command's output kept in its warning
ZWSP = "\u200b"  # a zero-width space: no chat service reads markup across it, and a person sees nothing


def inert(text: str) -> str:
    """``text`` as chat services show it but never act on it. A message carries the model's words (a failure's
    reason ends with the agent's output), and a chat reads some words as orders: `@everyone`, `@here` and
    `<!channel>` ping a whole team on their phones, `<@U123>` a person, `<https://x|your bank>` (Slack) and
    `[your bank](https://x)` (Discord, Teams) show a link under words of the model's choosing. A zero-width space
    after each ``@`` and ``<``, and inside ``](``, leaves every character where it was; a bidirectional control,
    which would show a name in another order than it holds, is written out (``[U+202E]``)."""
    return bidi_shown(text.replace("@", "@" + ZWSP).replace("<", "<" + ZWSP).replace("](", "]" + ZWSP + "("))


@dataclass(frozen=True)
class Message:
    """What a person is told (already redacted): the task, what it waits for, the command that answers it."""

    event: str  # waiting | failed
    task: str
    status: str
    title: str
    body: str
    answer: str
    step: str | None = None
    phase: str | None = None


def send(spec: NotifySpec, message: Message, *, root: Path, task_dir: Path, run_id: str) -> tuple[int, list[str]]:
    """(targets that took the message, warnings for those that did not)."""
    sent, warnings = 0, []
    for url in spec.apprise:
        problem = _apprise(url, message, spec.timeout)
        sent += problem is None
        warnings += [] if problem is None else [problem]
    if spec.run:
        problem = _command(spec, message, root, task_dir, run_id)
        sent += problem is None
        warnings += [] if problem is None else [problem]
    return sent, warnings


def _apprise(url: str, message: Message, timeout: float) -> str | None:
    import apprise  # only a message being sent pays for apprise and its plugins

    scheme = url.split("://", 1)[0] + "://"  # a URL may hold a token: a warning names only its kind
    target = apprise.Apprise(asset=apprise.AppriseAsset(async_mode=False))
    # $VARS come from the environment, so a webhook's token can live there instead of in a committed file.
    if not target.add(os.path.expandvars(url)):
        return f"notify: {scheme} is not a URL apprise can send to (see its list of services)"
    kind = apprise.NotifyType.WARNING if message.event == "waiting" else apprise.NotifyType.FAILURE
    for service in target:
        service.socket_read_timeout = service.socket_connect_timeout = timeout
    with apprise.LogCapture(level=apprise.logging.WARNING) as log:  # type: ignore[no-untyped-call]
        ok = target.notify(title=inert(message.title), body=inert(message.body), notify_type=kind)
    if ok:
        return None
    said = [line.split(" - ", 2)[-1] for line in str(log.getvalue()).splitlines() if line.strip()]
    return redact(f"notify: {scheme} did not take the message" + (f": {said[-1]}" if said else ""))


def _command(spec: NotifySpec, message: Message, root: Path, task_dir: Path, run_id: str) -> str | None:
    assert spec.run is not None
    env = {**os.environ, "SPECD_TASK": message.task, "SPECD_TASK_DIR": str(task_dir), "SPECD_RUN_ID": run_id,
           "SPECD_STEP": message.step or "", "SPECD_PHASE": message.phase or "",
           "SPECD_NOTIFY_EVENT": message.event, "SPECD_NOTIFY_STATUS": message.status,
           "SPECD_NOTIFY_TITLE": message.title, "SPECD_NOTIFY_MESSAGE": message.body,
           "SPECD_NOTIFY_ANSWER": message.answer}
    log = transcript_path(task_dir, run_id, "notify", ".log")
    try:
        outcome = run_group(spec.run, cwd=root, env=env, stdin=message.body, log=log, timeout=spec.timeout,
                            jail=spec.jail.within(task_dir))
    except OSError as exc:
        return redact(f"notify: could not start `run`: {exc.strerror or exc}")
    if outcome.timed_out:
        return f"notify: `run` timed out after {spec.timeout:g} s (its output: {log})"
    if outcome.returncode != 0:
        return redact(f"notify: `run` exited with status {outcome.returncode}: "
                      f"{outcome.tail(TAIL) or '(no output)'}")
    return None
