"""The SpecdStatus search attribute: specd's status of each task's workflow, so Temporal's UI and CLI can filter
on it (``temporal workflow list --query 'SpecdStatus="WAITING_FOR_HUMAN"'``), where a waiting workflow otherwise
shows only as RUNNING.

A workflow may only set an attribute its namespace has registered (else its workflow task fails, over and over),
so `specd run` and `specd worker` register it first, through the operator service, and a job says whether they
could (``search``). A server that refuses (Temporal Cloud takes it from `tcld` or its web page, not from a worker's
key) leaves the jobs without it: the memo still carries the status, and the submitter is told once how to add it.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.service import RPCError

from specd.executors.temporal.lookup import RPC

NAME = "SpecdStatus"
HOW = (f"`temporal operator search-attribute create --name {NAME} --type Keyword` (or start the dev server with "
       f"`--search-attribute {NAME}=Keyword`)")


async def ensure(client: Client, namespace: str) -> bool:
    """Whether the namespace has SpecdStatus, registering it when it lacks it (idempotent)."""
    try:
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=namespace), timeout=RPC)
        if NAME in listed.custom_attributes:
            return True
        await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=namespace, search_attributes={NAME: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD}), timeout=RPC)
    except RPCError as exc:
        return "already" in str(exc).lower()  # true when another submitter or worker registered it just now
    return True
