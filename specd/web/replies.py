"""JSON behind every page.

A page answers JSON when its address ends in ``.json`` (``/tasks/x.json``; the list is ``/tasks.json``) or when
the request sends ``Accept: application/json``. The document is the envelope every `--json` verb prints
(schemas/envelope.schema.json): ``{"ok", "task", ...what the page shows..., "error"}``, with ``error`` as
``{"code", "message", "fix"}`` and ``code`` an exit code (2, bad input, for every refusal here); the HTTP status
rides beside it as ``http``. The answer API (``/api/``) speaks JSON whatever is asked; refusals.py makes the
refusals, as pages or as this envelope.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from specd.redact import redact_obj
from specd.state.store import StateStore

FLAG = "specd.json"  # set in the request's scope when its address asked for JSON
LISTS = ("/tasks.json", "/index.json")  # the tasks list's JSON address ("/.json" reads badly)
BAD_INPUT = 2  # the exit code an envelope names for a refused request


class JsonSuffix:
    """ASGI middleware: ``/tasks/x.json`` is ``/tasks/x`` asked as JSON. A task's files keep their own names
    (``config.json`` is a file), so under ``/tasks/<task>/files/`` only the header asks for JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        parts = path.split("/")
        if path.endswith(".json") and not (len(parts) > 4 and parts[1] == "tasks" and parts[3] == "files"):
            plain = "/" if path in LISTS else path[: -len(".json")]
            scope = {**scope, "path": plain, "raw_path": plain.encode(), FLAG: True}
        await self.app(scope, receive, send)


def wants_json(scope: Scope) -> bool:
    if scope.get(FLAG) or str(scope.get("path", "")).startswith("/api/"):  # the API speaks nothing else
        return True
    accept = dict(scope.get("headers") or ()).get(b"accept", b"").decode("latin-1")
    return "application/json" in accept.lower()


def envelope(task: str | None, *, error: dict[str, Any] | None = None, **changed: Any) -> dict[str, Any]:
    return {"ok": error is None, "task": task, **changed, "error": error}


def reply(task: str | None, status: int = 200, error: dict[str, Any] | None = None, **changed: Any) -> Response:
    """The envelope as a JSON response, redacted whole like every page."""
    body = json.dumps(redact_obj(envelope(task, error=error, **changed)), default=str)
    return Response(body, status_code=status, media_type="application/json", headers={"Cache-Control": "no-store"})


def refusal(status: int, message: str, fix: str | None, task: str | None = None, **extra: Any) -> Response:
    return reply(task, status, error={"code": BAD_INPUT, "message": message, "fix": fix}, http=status, **extra)


def events(folder: Path, task: str, shown: int = 300) -> Response:
    """The task's last ``shown`` journal events, and the journal's size: where the live stream would go on."""
    store = StateStore(folder, task)
    size = store.journal.path.stat().st_size if store.journal.path.is_file() else 0
    return reply(task, events=store.journal.read()[-shown:], offset=size)
