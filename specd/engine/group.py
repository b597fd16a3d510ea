"""A `parallel` group's step stage (issue 30): its read-only members at the same time, then one combined outcome.

Each member runs in a thread of its own that only calls its agent (a subprocess or an API call) and hands the
result back; everything that touches the run state (its history row, its cost, the save) happens here, in the
loop's thread, as each member finishes. So the state keeps its one writer, and a member's row is durable
before the next one is looked at: a run killed during the group re-runs, on `continue`, only the members
with no row in this visit (from the same ``Current``, saved before any member started).

The members' jails bind the task's tree read-only (``read_only`` in their agent settings). Where no jail
can (no bubblewrap, or `sandbox: false`), the tree is compared before and after: a change fails the group,
so nothing a read-only step wrote is taken as its work. A member that fails fails the group (BLOCKED as
any step); the members that finished keep their rows. The group's own row holds the combined outcome, the
summed usage and every member's outcome and summary, which a later workflow reads as
``{{ steps.GROUP.summary }}`` (or ``{{ steps.MEMBER.summary }}`` / ``.output`` for one member); specd also
writes them to ``GROUP.group.md`` in the task folder for agents that read files.
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from specd.agents.base import AgentFailed, AgentResult, BudgetExhausted, Usage
from specd.engine import outputs, records
from specd.engine.failures import failure_stop
from specd.engine.group_view import breach, combined, note, tree_marks
from specd.engine.loop import Loop, Stop
from specd.engine.machinery import Tampered
from specd.pipeline.model import Step
from specd.state.model import Current, Frame
from specd.state.store import Heartbeat

Done = tuple[Step, str, "AgentResult | Exception", str]  # member, started_at, what it returned, finished_at


def run(loop: Loop, frame: Frame, group: Step, cur: Current, conversation: str) -> None:
    """Run the members without a row in this visit, record each as it ends, then the group's own row."""
    reason = loop.dispatcher.budget().check(Usage())
    if reason:
        loop.budget_stop(reason, frame, group)
    rows = finished(loop.state.history, cur, group)
    todo = [m for m in group.members if m.enabled and m.name not in rows]
    cur.attempt += 1
    loop.store.save(loop.state, settled=False)  # saved before any member starts: a crash re-runs the unfinished
    loop.events.emit("step_started", step=group.name, pipeline=frame.pipeline, phase=frame.phase,
                     attempt=cur.attempt, members=[m.name for m in todo])
    for member in todo:
        loop.dispatcher.agent_for(member)  # built here, once, not by two threads at the same time
    before = tree_marks(loop.project.root, loop.store.task_dir)
    failures: list[str] = []
    budget: tuple[str, float] | None = None
    try:
        with Heartbeat(loop.store.heartbeat_path), loop.machinery.watch(loop.events, f"group {group.name!r}") as saved:
            for member, started, got, ended in _side_by_side(loop, frame, group, todo, conversation, cur):
                if isinstance(got, BudgetExhausted):
                    loop.spend(got.usage)
                    budget = (got.reason, got.next_call_usd)
                    continue
                row = _record(loop, cur, group, member, got, started, ended)
                saved()  # specd's own save, not a member's write
                if row.get("kind") != "step":
                    failures.append(f"member {member.name!r} {row['summary']}")
                else:
                    rows[member.name] = row
    except Tampered as exc:
        _fail(loop, cur, f"group {group.name!r} {exc}")
    why = breach(loop.project.root, loop.store.task_dir, before, f"group {group.name!r}")
    if why:
        _fail(loop, cur, why)
    if failures:
        _fail(loop, cur, f"group {group.name!r}: " + "; ".join(failures) + " (the members that finished are kept)")
    if budget:
        loop.budget_stop(budget[0], frame, group, budget[1])
    _settle(loop, frame, group, cur, rows)


def finished(history: list[dict[str, Any]], cur: Current, group: Step) -> dict[str, dict[str, Any]]:
    """This visit's rows of the group's members that finished, by member name."""
    return {str(row["step"]): row for row in history
            if row.get("group") == group.name and row.get("kind") == "step" and not row.get("superseded")
            and (row.get("pipeline"), row.get("phase"), row.get("visit")) == (cur.pipeline, cur.phase, cur.visit)}


def _side_by_side(loop: Loop, frame: Frame, group: Step, todo: list[Step], conversation: str,
                  cur: Current) -> Iterator[Done]:
    """Start every member in a thread; yield each as it ends (daemon threads: an interrupt does not wait)."""
    ended: queue.Queue[Done] = queue.Queue()
    allowed = tuple(outcome for outcome, _ in group.combine)

    def one(member: Step) -> None:
        dispatcher = copy.copy(loop.dispatcher)  # its own output_error; the workflows it read stay shared
        dispatcher.output_error = ""
        started = stamp()
        try:
            got: AgentResult | Exception = dispatcher.step(member, frame.pipeline, frame.phase,
                                                           f"{conversation}.{member.name}", cur.attempt, allowed)
        except Exception as exc:  # noqa: BLE001 - handed to the loop's thread, which says what it was
            got = exc
        ended.put((member, started, got, stamp()))

    for member in todo:
        threading.Thread(target=one, args=(member,), name=f"specd-{member.name}", daemon=True).start()
    for _ in todo:
        while True:
            try:
                yield ended.get(timeout=1.0)  # with a timeout: an interrupt reaches this thread at once
                break
            except queue.Empty:
                continue


def _record(loop: Loop, cur: Current, group: Step, member: Step, got: AgentResult | Exception, started: str,
            ended: str) -> dict[str, Any]:
    """The member's history row, saved before the next member's is looked at."""
    allowed = [outcome for outcome, _ in group.combine]
    fields: dict[str, Any] = {}
    if isinstance(got, AgentFailed):
        loop.spend(got.usage)
        kind, outcome, summary, usage = "attempt", "failed", f"failed: {got.reason}", got.usage
        fields["transcript"] = str(got.transcript) if got.transcript else None
    elif not isinstance(got, AgentResult):
        kind, outcome, summary, usage = "attempt", "failed", f"failed: {got}", Usage()
    else:
        loop.spend(got.usage)
        usage, fields = got.usage, {**dict(got.data), "transcript": str(got.transcript) if got.transcript else None}
        error = outputs.refusal(loop.dispatcher.output_schema(member), got)
        if got.outcome not in allowed:
            kind, outcome, summary = "attempt", "failed", (f"reported outcome {got.outcome!r}; a member of group "
                                                           f"{group.name!r} may report {', '.join(allowed)}")
        elif error:
            kind, outcome, summary = "attempt", "failed", f"returned an output that was refused: {error}"
            fields["output_error"] = error
        else:
            kind, outcome, summary = "step", got.outcome, got.summary
    row = records.entry(cur, kind=kind, outcome=outcome, summary=summary, usage=usage, **fields)
    row.update(step=member.name, group=group.name, started_at=started, finished_at=ended)
    loop.state.history.append(row)
    loop.store.save(loop.state, settled=False)
    loop.events.emit("member_finished", step=member.name, group=group.name, pipeline=cur.pipeline, phase=cur.phase,
                     outcome=outcome, summary=summary, usage=usage.as_dict())
    return row


def _settle(loop: Loop, frame: Frame, group: Step, cur: Current, rows: Mapping[str, dict[str, Any]]) -> None:
    """The group's own row: the combined outcome, the members' outcomes, their usage summed."""
    ran = [rows[m.name] for m in group.members if m.name in rows]
    outcome = combined(group.combine, [str(row["outcome"]) for row in ran])
    if outcome is None:
        said = ", ".join(f"{row['step']}: {row['outcome']}" for row in ran) or "none ran: every member is disabled"
        _fail(loop, cur, f"group {group.name!r}: no combine rule matches the members' outcomes ({said})")
    assert outcome is not None
    summary = note(loop.store.task_dir, group.name, outcome, ran)
    usage = sum((Usage.from_dict(row.get("usage") or {}) for row in ran), Usage())
    cur.outcome, cur.summary = outcome, summary
    loop.state.history.append(records.entry(
        cur, kind="step", outcome=outcome, summary=summary, usage=usage,
        artifacts=records.artifacts(cur.snapshot, loop.store.task_dir),
        members=(members := {str(row["step"]): row["outcome"] for row in ran})))
    cur.completed.append("step")
    loop.store.save(loop.state, durable=False)  # as a step's: the move's save, next, makes it durable
    loop.events.emit("step_finished", step=group.name, pipeline=frame.pipeline, phase=frame.phase, outcome=outcome,
                     summary=summary, usage=usage.as_dict(), members=members, last=loop.last)


def stamp() -> str:
    """A member's start or end, to the millisecond: the rows show members overlapping, not only the same second."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _fail(loop: Loop, cur: Current, reason: str) -> None:
    raise Stop(*failure_stop(loop.state, cur, reason, kind="step", task=loop.task))
