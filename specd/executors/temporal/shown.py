"""How a Temporal-run task is shown: what its workers pushed, corrected by what its workflow says.

The pushed run state is a copy written on a worker. Read here, three of its words would mislead:
- a step that runs (IN_PROGRESS) has no process on this machine, so the local liveness check would call it
  STOPPED and say `specd continue TASK` resumes it, which refuses a task that lives on Temporal;
- a gate answered: the workflow takes the answer at once, but the worker pushes only once the step it leads to is
  done, so the pushed copy still says WAITING_FOR_HUMAN (and asks for the answer already given);
- a workflow that ended without pushing (a job its worker refused, a workflow terminated or timed out) leaves the
  last pushed state behind, IN_PROGRESS or waiting, where the workflow says BLOCKED or FAILED and why.
A task whose workflow ended CANCELLED or FAILED is told `specd run TASK --move` (brought here with its history,
where `rerun` and `retry` act), not the `rerun` or `retry` its pushed copy names, which act on a copy here.
The answers a waiting task is told about are those that signal its workflow, never `continue --approve`.
"""

from __future__ import annotations

from typing import Any

from specd.engine.waiting import answers_text


def as_workflow_says(task: str, data: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """``data`` (the pushed task's status) corrected by ``found`` (its workflow, as ``lookup.state`` reads it)."""
    data = dict(data)
    if not found["running"] and found["status"] != data.get("status"):
        data.update(status=found["status"], idle=None, running=None, hint=None, status_note=None,
                    reason=found["reason"] or f"its workflow ended {found['status']}")
    if not found["running"]:
        if data.get("status") in ("CANCELLED", "FAILED"):  # `retry` and `rerun` act here: it comes here first
            data["hint"] = f"specd run {task} --move"
        return data
    if data.get("status") == "WAITING_FOR_HUMAN" and found["status"] == "IN_PROGRESS":
        data.update(status="IN_PROGRESS", reason=None, waiting=None)  # answered: the workflow took it up
    if data.get("status") == "IN_PROGRESS":
        step = f" ({found['step']})" if found.get("step") else ""
        data.update(idle=None, running=None, hint=None,
                    status_note=f"runs on Temporal{step}: a worker goes on by itself, and a worker that died is "
                                f"replaced after the heartbeat timeout; stop it with `specd cancel {task}`")
    if data.get("status") == "WAITING_FOR_HUMAN":
        data["hint"] = f"specd approve {task}"  # signals the workflow (this clone knows where it runs)
    return answered_by_signals(task, data)


def answered_by_signals(task: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` whose reason names the answers that signal a workflow, not `continue --approve` (the page's view
    of a pushed copy uses it too)."""
    reason = str(data.get("reason") or "")
    if data.get("status") == "WAITING_FOR_HUMAN" and reason.endswith(answers_text(task)):
        data = data | {"reason": reason[: -len(answers_text(task))] + answers_text(task, go_on=False)}
    return data
