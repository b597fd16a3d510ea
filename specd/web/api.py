"""The control plane's small JSON API, which `specd approve|reject|skip TASK --server URL` speaks.

POST /api/tasks/<task>/<approve|reject|skip> with ``Authorization: Bearer <token>`` and a JSON object
``{"note": "...", "by": "Name <email>"}``; the answer is ``{"ok", "task", "said", "next", "error"}``, the
envelope every `--json` verb prints, with ``error`` as ``{"code", "message", "fix"}``.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

MAX_BODY = 64 * 1024  # a note is text for a prompt, not a file


async def body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, or None when it is not one (or is too big to be a note)."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return None
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def failure(message: str, fix: str) -> dict[str, Any]:
    return {"ok": False, "task": None, "error": {"code": 2, "message": message, "fix": fix}}  # 2: bad input
