"""Every request the page serves is redacted with the secret values the project's files hold now.

The page runs for days, and loaded the project's secret files once, at its start: a ``.env`` a step made later
was unknown to it, so the step's transcript (which the run wrote before that file existed) showed the file's
values on the page, and on the phone it was opened on. Inside the Guard (so a request without the token costs
nothing), each request first looks for the project's secret files again, at most once a second
(``tasks.secrets.refresh_project_secrets``); a live stream looks again before each output it sends
(``live.task_stream``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from specd.tasks.secrets import refresh_project_secrets


class Secrets:
    """ASGI middleware: the project's secret values looked for again before the request is served."""

    def __init__(self, app: ASGIApp, root: Path) -> None:
        self.app, self.root = app, root

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await asyncio.to_thread(refresh_project_secrets, self.root)
        await self.app(scope, receive, send)
