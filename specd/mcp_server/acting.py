"""What the acting tools do: answer a held gate, start a task, cancel it. Each is recorded as coming from MCP.

An answer is the very ``engine.control.answer`` `specd approve|reject|skip` calls, made in the task's home with
the MCP origin and the project's git identity; the control plane, when one runs, starts the task by itself (as it
does after an answer from the terminal). Without one, the answer hands the task on to a background run unless
the caller says not to, so "approve" in an MCP client means what a person means by it: go on.
"""

from __future__ import annotations

from typing import Any

from specd.engine import control
from specd.engine.answers import FILES
from specd.errors import UsageError
from specd.executors import claim
from specd.git import identity
from specd.mcp_server import going
from specd.mcp_server.reading import Answer, envelope
from specd.redact import redact
from specd.state.checkpoint import Origin
from specd.tasks import home
from specd.tasks.locate import locate
from specd.tasks.project import Project
from specd.tasks.task import existing_task


def origin(project: Project) -> Origin:
    return identity.here("mcp", project.root)


def home_of(project: Project, task: str) -> Project:
    """Where ``task`` lives now (the main tree, or its worktree while `specd run` runs it). A task on Temporal is
    its workflow's: answered and cancelled by a signal (``signalled``), never run here as a second copy."""
    where = locate(project, task)
    existing_task(where, task)  # an unknown name: the error with "did you mean"
    found = home.current(home.main_of(project), task)
    if found.kind == "temporal":
        raise UsageError(f"task {task!r} runs on Temporal (workflow {found.workflow_id}), whose workers run it; "
                         "starting it here too would make a second copy",
                         fix="answer it (approve, reject, skip) and its workers go on; follow it with show_task. To "
                             f"run it on this machine instead: cancel it, then `specd run {task} --move` in a "
                             "terminal brings it here with every step its workers finished")
    return where


def signalled(project: Project, task: str, verb: str, note: str) -> str | None:
    """What was sent, when ``task`` runs on Temporal and its workflow is live: the answer or cancel goes to the
    workflow as `specd approve|reject|skip|cancel` sends it, with the Temporal settings this clone recorded (or
    SPECD_TEMPORAL_*). None when the task is not on Temporal."""
    existing_task(locate(project, task), task)
    found = home.current(home.main_of(project), task)
    if found.kind != "temporal":
        return None
    from specd.executors.temporal.signals import answer_on_temporal

    said = answer_on_temporal(project, task, verb, note, {"temporal_address": found.address or None})
    if said is None:
        raise UsageError(f"task {task!r} runs on Temporal, but its workflow is not running (or this clone does not "
                         "know where Temporal is)",
                         fix="set SPECD_TEMPORAL_ADDRESS for `specd mcp`, or see `specd status "
                             f"{task} --temporal HOST:PORT`")
    return said


def answer(verb: str) -> Any:
    def act(project: Project, args: dict[str, Any]) -> Answer:
        task, note = args["task"], str(args.get("note") or "")
        if verb == "reject" and not note.strip():
            raise UsageError("reject needs a note: what to change (it goes into the step's prompt)",
                             fix=f"call reject again with note, e.g. {{\"task\": \"{task}\", \"note\": \"...\"}}")
        if verb == "approve":
            held_for_a_person(project, task)
        sent = signalled(project, task, verb, note if verb != "skip" else "")
        if sent is not None:
            after = "its Temporal workers go on by themselves; follow it with show_task"
            return envelope(task, answer=verb, said=sent, next=after), redact(f"{task}: {sent}\nnext: {after}")
        where = home_of(project, task)
        said = control.answer(where, task, verb, note if verb != "skip" else "", origin(project))
        plane = claim.running(project)
        if plane is not None:
            after = f"the control plane {plane.text()} runs it now; follow it with show_task"
        elif args.get("go_on", True):
            after = going.start(project, task, "continue")
        else:
            after = f"call continue_task (or run `specd continue {task}`)"
        return envelope(task, answer=verb, said=said, next=after), redact(f"{task}: {said}\nnext: {after}")
    return act


def held_for_a_person(project: Project, task: str) -> None:
    """Refuse to approve a wait on files a step left (a secret in them, or source hidden from git): it is there for
    a person to look at those files. An MCP client is a model that reads what the step's model wrote (a summary,
    a document, a log), and that text can ask it to approve; an approval would commit the secret, or leave the
    hidden code where your next test run runs it."""
    from specd.mcp_server.reading import show_task

    wait = show_task(project, {"task": task})[0].get("waiting") or {}
    if wait.get("kind") in FILES:
        files = ", ".join(str(f.get("path")) for f in wait.get("files") or [])
        raise UsageError(f"task {task!r} waits for a person to look at files its step left ({files}): "
                         f"{'they hold a secret' if wait['kind'] == 'secret' else 'code hidden from git'}; an MCP "
                         "client cannot approve that",
                         fix=f"ask the person to look at them, then `specd approve {task}` in a terminal or the "
                             f"approve button on the task's page; reject (with a note) runs the step again")


def start(verb: str) -> Any:
    def act(project: Project, args: dict[str, Any]) -> Answer:
        task = args["task"]
        home_of(project, task)
        said = going.start(project, task, verb)
        return envelope(task, started=verb, said=said), redact(f"{task}: {said}")
    return act


def cancel(project: Project, args: dict[str, Any]) -> Answer:
    task = args["task"]
    sent = signalled(project, task, "cancel", "")
    if sent is not None:  # the workflow records CANCELLED as its step stops (or had already ended)
        return envelope(task, said=sent), redact(f"{task}: {sent}")
    where = home_of(project, task)
    said = control.cancel(where, task, origin(project))
    return envelope(task, status="CANCELLED", said=said), redact(f"{task}: {said}")
