"""A task on Temporal answered or cancelled by a signal to its workflow, and the Temporal settings in force:
what `specd approve|reject|skip|cancel` and `specd mcp` share. temporalio is imported only when a task runs
there."""

from __future__ import annotations

from typing import Any

from specd.errors import UsageError
from specd.tasks.project import Project

STOP_WAIT = 60.0  # seconds a cancelled workflow gets to stop its step and record CANCELLED


def settings_from(project: Project | None, options: dict[str, Any], task: str | None = None) -> Any:
    """The Temporal settings in force (flags, env, config.json, then this clone's record of the task), or None."""
    from specd.executors.temporal import record
    from specd.executors.temporal.settings import resolve

    recorded = record.where(project, task) if project is not None and task else {}
    return resolve(project, address=options.get("temporal_address") or recorded.get("address"),
                   namespace=options.get("temporal_namespace") or recorded.get("namespace"),
                   task_queue=options.get("temporal_queue") or recorded.get("task_queue"),
                   remote=options.get("remote") or recorded.get("remote"))


def answer_on_temporal(project: Project, task: str, verb: str, note: str, options: dict[str, Any],
                       by: str = "") -> str | None:
    """Signal the task's workflow when it runs on Temporal; None when it does not (answer it locally). ``by``:
    who answers, when not this clone's git identity (a person on the page, or another clone through it)."""
    from specd.executors.temporal import record

    if not any(options.values()) and record.lives_here(project, task):
        return None  # moved here from Temporal: answered here, whether Temporal is up or not
    settings = settings_from(project, options, task)
    if settings is None:
        return None
    from specd.executors.temporal import require

    require()
    import asyncio

    from specd.executors.temporal import lookup
    from specd.executors.temporal.ids import repo_key
    from specd.git.identity import who

    async def go() -> str | None:
        client = await lookup.connect(settings)
        key = repo_key(project.root)
        found = await lookup.state(client, key, task)
        if found is not None and not found["running"] and verb == "cancel":
            return f"its workflow already ended ({found['status']}); nothing to cancel"
        if found is None or not found["running"]:
            return None
        handle = lookup.handle(client, key, task)
        if verb == "cancel":  # a signal the workflow keeps until it acts on it: during a step, between, waiting
            await handle.signal("cancel", {"by": by or who(project.root)}, rpc_timeout=lookup.RPC)
            # as a local cancel waits for the run to stop: the step stops at its next heartbeat
            for _ in range(int(STOP_WAIT / 0.5)):
                found = await lookup.state(client, key, task)
                if found is None or not found["running"]:
                    return f"cancelled workflow {handle.id}: its step stopped and the task is CANCELLED"
                await asyncio.sleep(0.5)
            return f"cancel sent to workflow {handle.id}; its step stops at its next heartbeat"
        if found["status"] != "WAITING_FOR_HUMAN":
            raise UsageError(f"task {task!r} runs on Temporal ({found['status']}) and waits for nothing",
                             fix=f"answer it once `specd status {task}` shows it waiting")
        earlier = await answered(client, handle, found.get("wait"))
        if earlier is not None:  # the workflow keeps one answer a wait: a second would be dropped unseen
            raise UsageError(f"task {task!r} on Temporal was answered already ({earlier.get('answer')} by "
                             f"{earlier.get('by') or 'someone'}); its workers take that answer up when they next run "
                             "it, and a wait takes one answer",
                             fix=f"see `specd status {task}`; answer again when it next waits")
        # who answers travels with the answer: the worker that records it runs in a clone of its own
        given = {"answer": verb, "note": note, "by": by or who(project.root)}
        if found.get("wait") is not None:  # the wait it answers: one sent for a wait over when it arrives is dropped
            given["wait"] = found["wait"]  # (only where the memo numbers waits: an older worker refuses the field)
        await handle.signal("answer", given, rpc_timeout=lookup.RPC)
        return f"{verb} sent to workflow {handle.id}; the answer is recorded as a checkpoint as the task goes on"

    return asyncio.run(go())


async def answered(client: Any, handle: Any, wait: Any) -> dict[str, Any] | None:
    """The answer already sent for the wait the workflow is in (numbered ``wait``), read from its history: no
    worker need run to see it. None when there is none, or when the workflow does not number its waits."""
    if wait is None:
        return None
    from temporalio.service import RPCError

    try:
        async for event in handle.fetch_history_events():
            if not event.HasField("workflow_execution_signaled_event_attributes"):
                continue
            signal = event.workflow_execution_signaled_event_attributes
            if signal.signal_name == "answer":
                given = (await client.data_converter.decode(signal.input.payloads) or [None])[0]
                if isinstance(given, dict) and given.get("wait") == wait:
                    return given
    except RPCError:
        return None  # unknown: the workflow itself still keeps only the first
    return None
