"""Talking to Temporal from anywhere: connect (checked, with short timeouts), find a task's workflow, read how
it stands. Never a query: a query with no worker polling hangs for about 30 s; describe and the memo the
workflow keeps up to date answer at once.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from specd.errors import SpecdError
from specd.executors.temporal.codec import converter
from specd.executors.temporal.ids import workflow_id
from specd.executors.temporal.settings import Settings, tls_config

RPC = timedelta(seconds=10)
CLOSED = {WorkflowExecutionStatus.CANCELED: "CANCELLED", WorkflowExecutionStatus.FAILED: "FAILED",
          WorkflowExecutionStatus.TERMINATED: "FAILED", WorkflowExecutionStatus.TIMED_OUT: "FAILED"}


class TemporalError(SpecdError):
    """Temporal cannot be reached or refuses the request; the message names the address and the fix."""


async def connect(settings: Settings) -> Client:
    try:
        client = await asyncio.wait_for(
            Client.connect(settings.address, namespace=settings.namespace, data_converter=converter(),
                           tls=tls_config(settings), api_key=settings.api_key), timeout=15)
    except (TimeoutError, RuntimeError, RPCError, OSError) as exc:
        raise TemporalError(f"cannot reach Temporal at {settings.address}: {_first_line(exc)}",
                            fix="start it (`temporal server start-dev`) or pass the right --temporal HOST:PORT "
                                "(or SPECD_TEMPORAL_ADDRESS)") from None
    try:
        await client.workflow_service.describe_namespace(DescribeNamespaceRequest(namespace=settings.namespace),
                                                         timeout=RPC)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise TemporalError(f"Temporal at {settings.address} has no namespace {settings.namespace!r}",
                                fix="pass --namespace NAME (or SPECD_TEMPORAL_NAMESPACE) with one that exists "
                                    "(`temporal operator namespace list`)") from None
        raise TemporalError(f"Temporal at {settings.address} refused: {_first_line(exc)}",
                            fix="check the address, namespace, TLS and API key settings") from None
    return client


def handle(client: Client, key: str, task: str) -> WorkflowHandle[Any, Any]:
    return client.get_workflow_handle(workflow_id(key, task))


async def state(client: Client, key: str, task: str) -> dict[str, Any] | None:
    """How the task's latest workflow stands: {"running", "status", "reason", "step", "wait"} (``wait``: which of
    its waits it is in, named by an answer); None when none exists."""
    try:
        info = await handle(client, key, task).describe(rpc_timeout=RPC)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    memo = await info.memo()
    running = info.status == WorkflowExecutionStatus.RUNNING
    found: dict[str, Any] = {"running": running, "status": str(memo.get("status") or "IN_PROGRESS"),
                             "reason": str(memo.get("reason") or ""), "step": "", "wait": memo.get("wait")}
    for pending in info.raw_description.pending_activities:
        if pending.heartbeat_details.payloads:
            details = await client.data_converter.decode(pending.heartbeat_details.payloads)
            found["step"] = str((details[0] or {}).get("step") or "") if details else ""
    # a job its worker refused failed the workflow; the memo keeps BLOCKED and why (fix it, then submit again)
    refused = info.status == WorkflowExecutionStatus.FAILED and memo.get("status") == "BLOCKED"
    if info.status == WorkflowExecutionStatus.COMPLETED:
        result = await handle(client, key, task).result(rpc_timeout=RPC)
        found.update(status=str(result.get("status")), reason=str(result.get("reason") or ""),
                     waiting_for=list(result.get("waiting_for") or []))
    elif not running and not refused:
        found.update(status=CLOSED.get(info.status, "FAILED") if info.status else "FAILED",
                     reason="cancelled" if info.status == WorkflowExecutionStatus.CANCELED else
                     f"the workflow ended {info.status.name if info.status else 'unexpectedly'}")
    return found


async def outcome(client: Client, key: str, task: str) -> str:
    """A need as a dependant sees it: COMPLETE, RUNNING (wait), or how it ended."""
    found = await state(client, key, task)
    if found is None or found["running"]:
        return "RUNNING"
    return str(found["status"])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    for plain in ("Connection refused", "No route to host", "Name or service not known", "timed out",
                  "certificate", "Unauthenticated", "PermissionDenied"):
        if plain.lower() in text.lower():
            return plain[0].lower() + plain[1:]  # the transport's own words, without its debug dump
    return text.splitlines()[0][:200]
