"""What the dashboard says when it will not show a page: 401 (no token), 403, 404 (with the tasks you may have
meant, by the CLI's "did you mean"), 409 (a task in two places). As a page in the dashboard's style, or as the
`--json` envelope when JSON was asked (``replies``). A 401 says how to get the address with the token; it shows
neither the token nor anything of the project, since whoever reads it has not shown they may know either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from specd.errors import closest
from specd.redact import redact
from specd.tasks import locate
from specd.tasks.project import Project
from specd.tasks.task import list_tasks
from specd.web import auth, replies

# app.py's renderer: (request, template, context, status)
Page = Callable[[Request, str, dict[str, Any], int], Response]
Handler = Callable[[Request, Exception], Awaitable[Response]]
TITLES = {401: "the access token is missing", 403: "refused", 404: "not found", 409: "the task is in two places"}
TOKEN_FIX = ("open the address `specd ui` printed when it started (it ends in ?token=...); lost it? stop `specd ui` "
             "and start it again for a new one, or choose one with `specd ui --token T`")


def handlers(project: Project, page: Page) -> tuple[Handler, auth.Refuse]:
    """The app's handler of HTTPException, and the refusal the token guard answers with."""

    def refused(request: Request, code: int, info: dict[str, Any]) -> Response:
        if replies.wants_json(request.scope):
            return replies.refusal(code, info["message"], info.get("fix"), info.get("task"),
                                   suggestions=info.get("suggestions") or [])
        return page(request, "error.html", {"code": code, "title": TITLES.get(code, "error"), **info}, code)

    async def not_found(request: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        task = request.path_params.get("task") if code == 404 else None
        task = task if isinstance(task, str) else None
        if code == 404:
            info = await asyncio.to_thread(missing, project, request.url.path, task)
        elif code == 409 and isinstance(exc, HTTPException):
            info = {"message": redact(exc.detail), "fix": "`specd status` says where the task lives"}
        else:
            info = {"message": f"{code} at {request.url.path}", "fix": None}
        return refused(request, code, {**info, "task": task})

    def guard_refused(request: Request, code: int, message: str) -> Response:
        fix = TOKEN_FIX if code == 401 else None
        return refused(request, code, {"message": message, "fix": fix, "project": ""})

    return not_found, guard_refused


def known_tasks(project: Project) -> list[str]:
    """Every task name a visitor could have meant: the main tree's and those running in worktrees."""
    try:
        return sorted(set(list_tasks(project)) | locate.in_worktrees(project))
    except OSError:
        return []


def missing(project: Project, path: str, task: str | None) -> dict[str, Any]:
    """What a 404 says: which task is not there (and the names it is closest to), or which address."""
    if task is None:
        return {"message": f"nothing at {path}", "fix": "the tasks list is at /", "suggestions": []}
    known = known_tasks(project)
    if task in known:
        return {"message": f"task {task!r} has nothing at {path}", "fix": f"its page is /tasks/{task}",
                "suggestions": [task]}
    near = closest(task, known, n=3)
    fix = f"did you mean {', '.join(repr(n) for n in near)}?" if near else "the tasks list at / names every task"
    return {"message": f"no task {task!r} in this project", "fix": fix, "suggestions": near}
