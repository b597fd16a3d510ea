"""The tools `specd mcp` offers: each one's name, what it is for (the text an MCP client's model reads), its input
as a JSON Schema, and the function that answers it. Names follow the verbs where a verb exists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from specd.mcp_server import acting, reading
from specd.tasks.project import Project


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict[str, Any]
    run: Callable[[Project, dict[str, Any]], reading.Answer]
    changes: bool = True  # whether it changes anything (an MCP client may ask before calling one that does)


def _input(required: tuple[str, ...] = ("task",), **fields: dict[str, Any]) -> dict[str, Any]:
    properties = {"task": {"type": "string", "description": "The task's name (its folder in .specd/tasks/)."}}
    return {"type": "object", "properties": {**properties, **fields}, "required": list(required),
            "additionalProperties": False}


NOTE = {"type": "string", "description": "Why; recorded in the checkpoint and given to the step."}
GO_ON = {"type": "boolean", "default": True,
         "description": "When no control plane runs, start the task in the background after the answer "
                        "(default true; the control plane, when one runs, always starts it)."}
TOOLS = (
    Tool("list_tasks", "List every task with its status, next step, phase, what it needs and its cost; tasks "
         "waiting for a human (WAITING_FOR_HUMAN) come first. Optionally only those with one status.",
         _input((), status={"type": "string", "description": "Only tasks with this status, e.g. "
                            "WAITING_FOR_HUMAN, BLOCKED, COMPLETE (also ANSWERED, STOPPED)."}),
         reading.list_tasks, changes=False),
    Tool("show_task", "Show one task in detail: status, what it waits for, the steps left (plan), history, "
         "cost and token usage, the human checkpoints (who answered what, from where).",
         _input(), reading.show_task, changes=False),
    Tool("approve", "Approve what a waiting task waits for (a gate before a step, or an escalation); the task "
         "then goes on.", _input(note=NOTE, go_on=GO_ON), acting.answer("approve")),
    Tool("reject", "Send a waiting task back to an earlier step (the step's on_reject, default the previous "
         "step), which runs again with the note in its prompt. The note is required.",
         _input(("task", "note"), note={**NOTE, "description": "What to change; it goes into the step's prompt."},
                go_on=GO_ON), acting.answer("reject")),
    Tool("skip", "Skip the step a waiting task waits at: it counts as finished with outcome done.",
         _input(go_on=GO_ON), acting.answer("skip")),
    Tool("continue_task", "Continue a task from where it stands (like `specd continue TASK`), through the "
         "project's control plane when one runs, else as a background run; returns at once.",
         _input(), acting.start("continue")),
    Tool("run_task", "Run a task in its own git worktree with the tasks it needs (like `specd run TASK`), "
         "through the control plane when one runs, else as a background run; returns at once.",
         _input(), acting.start("run")),
    Tool("cancel", "Cancel a task for good: a running task is stopped gracefully, then marked CANCELLED.",
         _input(), acting.cancel),
    Tool("logs", "Read a task's log: its events (runs, steps, hooks, gates) and the agent transcript of each "
         "step; with step, only that step's.",
         _input(step={"type": "string", "description": "Only this step's events and transcripts."}),
         reading.logs, changes=False),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
