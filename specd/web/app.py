"""The dashboard's routes. Pages are rendered on the server; a few lines of script follow the live streams.

Every route sits behind ``auth.Guard`` (token, cookie, cross-site refusal); every path parameter goes
through ``paths`` (a task the project has, a file inside its folder), so anything else is 404. Every page also
answers JSON, the `--json` envelope (``replies``), at ``<page>.json`` or with ``Accept: application/json``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from specd.engine import control
from specd.errors import SpecdError
from specd.redact import redact
from specd.system.ownfiles import read_regular
from specd.system.visible import bidi_shown
from specd.tasks.project import Project
from specd.tasks.task import SLUG
from specd.web import actions, api, auth, detail, fresh, graph_svg, live, paths, refusals, replies, rows

TEMPLATES = Path(__file__).parent / "templates"
STATUSES = ("WAITING_FOR_HUMAN", "ANSWERED", "IN_PROGRESS", "STOPPED", "BLOCKED", "FAILED", "ABORTED", "NOT_STARTED",
            "COMPLETE", "CANCELLED")


def create_app(project: Project, token: str, plane: actions.Plane | None = None) -> Starlette:
    """The dashboard of ``project``; ``plane`` is the control plane serving it (`specd ui`), which Run and
    Continue ask, and which runs every answered task (without one, answers are only recorded)."""
    templates = Jinja2Templates(directory=str(TEMPLATES))
    csrf = auth.csrf_token(token)

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        """The rendered page, redacted whole: whatever a template shows, no secret value leaves the server."""
        html = templates.get_template(name).render({"request": request, "csrf": csrf, "project": project.root.name,
                                                     **context})
        # a file name that is not UTF-8 (an agent may make one) reaches the page as its bytes, shown with U+FFFD;
        # a bidirectional control (what an agent wrote may hold one) is written out: [U+202E]
        text = bidi_shown(redact(html).encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})

    def _filter(request: Request) -> str | None:
        wanted = request.query_params.get("status")
        return wanted if wanted in STATUSES else None

    def _listed(request: Request) -> str:
        """What an answer given on the list said, when the list is where it was given."""
        done, task_name = request.query_params.get("done", ""), request.query_params.get("task", "")
        if done not in actions.ANSWERS or not SLUG.match(task_name):
            return ""
        return (f"{task_name}: {done} recorded. "
                f"{actions.then(done, task_name, plane is not None, actions.lives_on_temporal(project, task_name))}")

    async def tasks(request: Request) -> Response:
        started, cpu = time.perf_counter(), time.process_time()
        wanted = _filter(request)
        every = await asyncio.to_thread(rows.every_row, project)
        found = [r for r in every if wanted is None or r["status"] == wanted]
        summary = rows.summary(every, STATUSES)
        if replies.wants_json(request.scope):
            return replies.reply(None, tasks=found, summary=summary, graph=rows.graph_nodes(every))
        response = page(request, "tasks.html", {
            "rows": found, "statuses": STATUSES, "wanted": wanted or "", "plane": plane is not None,
            "summary": summary, "said": _listed(request), "graph_svg": graph_svg.draw(every),
            "legend": graph_svg.legend(every)})
        # the server's own time, for bench/ui.py and the browser's network panel
        response.headers["Server-Timing"] = (f"render;dur={(time.perf_counter() - started) * 1000:.1f}, "
                                             f"cpu;dur={(time.process_time() - cpu) * 1000:.1f}")
        return response

    async def tasks_rows(request: Request) -> Response:
        if replies.wants_json(request.scope):
            return await tasks(request)
        found = await asyncio.to_thread(rows.task_rows, project, _filter(request))
        return page(request, "_rows.html", {"rows": found, "plane": plane is not None})

    async def tasks_events(request: Request) -> Response:
        if replies.wants_json(request.scope):  # one look at what the stream watches, for a script that polls
            marks = await asyncio.to_thread(live.fingerprint, project)
            return replies.reply(None, marks=[{"file": f, "mtime_ns": t, "size": n} for f, t, n in marks])
        return StreamingResponse(live.tasks_stream(project, request.is_disconnected), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    def _details(where: Project, folder: Path, name: str) -> dict[str, Any]:
        data = detail.task_page(where, folder, name)
        if actions.lives_on_temporal(project, name):  # its pushed copy: answered by signals, not `continue`
            from specd.executors.temporal.shown import answered_by_signals

            data["view"] = answered_by_signals(name, data["view"])
        return data

    def _task_page(request: Request, said: str = "", error: str = "", status: int = 200) -> Response:
        where, folder = paths.task_home(project, request.path_params["task"])
        data = _details(where, folder, request.path_params["task"])
        if replies.wants_json(request.scope):
            return replies.reply(data["task"], **{k: v for k, v in data.items() if k != "task" and "svg" not in k})
        return page(request, "task.html", {**data, "said": said, "error": error, "plane": plane is not None}, status)

    async def task_live(request: Request) -> Response:
        """The task page's live parts alone, which its script fetches again whenever the run moves."""
        where, folder = paths.task_home(project, request.path_params["task"])
        data = await asyncio.to_thread(_details, where, folder, request.path_params["task"])
        if replies.wants_json(request.scope):  # the same data as the whole page: the live parts are drawn from it
            return replies.reply(data["task"], **{k: v for k, v in data.items() if k != "task" and "svg" not in k})
        return page(request, "_task_live.html", {**data, "plane": plane is not None})

    async def task(request: Request) -> Response:
        done = request.query_params.get("done", "")
        task_name = request.path_params["task"]
        temporal = done in actions.ACTIONS and actions.lives_on_temporal(project, task_name)
        said = f"{done}: recorded. {actions.then(done, task_name, plane is not None, temporal)}" \
            if done in actions.ACTIONS \
            else f"{done}: asked. {actions.then(done, task_name)}" if done in actions.ASKS else ""
        return await asyncio.to_thread(_task_page, request, said)

    async def task_events(request: Request) -> Response:
        name = request.path_params["task"]
        _, first = paths.task_home(project, name)
        if replies.wants_json(request.scope):
            return await asyncio.to_thread(replies.events, first, name, detail.SHOWN_EVENTS)
        try:
            offset = int(request.query_params.get("offset", "0"))
        except ValueError:
            offset = 0

        def where() -> Path:  # the task's live folder now; where it was when a look cannot say
            try:
                return paths.task_home(project, name)[1]
            except HTTPException:
                return first

        return StreamingResponse(live.task_stream(where, max(0, offset), request.is_disconnected, project.root),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def step(request: Request) -> Response:
        where, folder = paths.task_home(project, request.path_params["task"])
        data = await asyncio.to_thread(detail.step_page, where, folder, request.path_params["task"],
                                       request.path_params["n"])
        if data is None:
            raise HTTPException(404)
        if replies.wants_json(request.scope):
            return replies.reply(data["task"], **{k: v for k, v in data.items() if k != "task"})
        return page(request, "step.html", data)

    async def document(request: Request) -> Response:
        _, folder = paths.task_home(project, request.path_params["task"])
        name, as_json = request.path_params["path"], replies.wants_json(request.scope)
        try:
            path = paths.task_file(folder, name)
        except HTTPException:  # NOTES.md.json: the JSON of NOTES.md, when no file has that very name
            if not name.endswith(".json"):
                raise
            name, as_json = name.removesuffix(".json"), True
            path = paths.task_file(folder, name)
        # at most what is shown, read: a task folder's file is the agent's to make, a sparse one of gigabytes too
        try:
            head = await asyncio.to_thread(read_regular, path, detail.MAX_TEXT * 4, follow=True, head=True)
        except OSError:  # replaced by a FIFO, or gone, since it was found
            raise HTTPException(404) from None
        text = redact(head.decode("utf-8", errors="replace")[: detail.MAX_TEXT])
        if as_json:
            return replies.reply(request.path_params["task"], name=name, text=text)
        return page(request, "document.html", {"task": request.path_params["task"], "name": name, "text": text})

    async def held(request: Request) -> Response:
        """A file the task's wait holds for a person to look at (nothing else of the tree), before approving."""
        where, folder = paths.task_home(project, request.path_params["task"])
        name = request.path_params["path"]
        text = await asyncio.to_thread(detail.held_file, where, folder, request.path_params["task"], name)
        if text is None:
            raise HTTPException(404)
        if replies.wants_json(request.scope):
            return replies.reply(request.path_params["task"], name=name, text=text)
        return page(request, "document.html", {"task": request.path_params["task"], "name": name, "text": text})

    async def act(request: Request) -> Response:
        task_name, verb = request.path_params["task"], request.path_params["verb"]
        if request.method != "POST" or verb not in (*actions.ACTIONS, *actions.ASKS):  # a GET changes nothing
            raise HTTPException(404)
        where, _ = paths.task_home(project, task_name)
        form = await request.form()
        if not auth.same(str(form.get(auth.CSRF_FIELD) or ""), csrf):
            return PlainTextResponse("403: the form's CSRF token is missing or wrong; reload the page\n", 403)
        fields = {k: str(form.get(k) or "") for k in ("note", "step", "phase", "back")}
        try:
            if await asyncio.to_thread(actions.lives_on_temporal, project, task_name):
                await asyncio.to_thread(actions.signal, project, task_name, verb, fields["note"], actions.page())
            elif verb in actions.ASKS:
                await asyncio.to_thread(actions.ask, plane, task_name)
            else:
                await asyncio.to_thread(actions.ACTIONS[verb], where, task_name, fields["note"], fields["step"],
                                        fields["phase"])
        except SpecdError as exc:
            message = f"{verb} refused: {exc.message}" + (f" (fix: {exc.fix})" if exc.fix else "")
            return await asyncio.to_thread(_task_page, request, "", redact(message), 400)
        if fields["back"] == "list" and verb in actions.ANSWERS:  # answered on the list: back to it
            return RedirectResponse(f"/?done={verb}&task={quote(task_name)}", status_code=303)
        return RedirectResponse(f"/tasks/{task_name}?done={verb}", status_code=303)

    async def api_answer(request: Request) -> Response:
        """`specd approve|reject|skip TASK --server URL` from another clone, and run|continue from `specd mcp` (which
        asks, as the page's buttons do): JSON in, JSON out, bearer token only (a browser's cookie is not enough
        here, so no page elsewhere can post to it)."""
        task_name, verb = request.path_params["task"], request.path_params["verb"]
        if verb not in (*actions.ANSWERS, *actions.ASKS):
            raise HTTPException(404)
        if not request.headers.get("authorization", "").lower().startswith("bearer "):
            return JSONResponse(api.failure("send the token as `Authorization: Bearer TOKEN`", ""), 401)
        where, _ = paths.task_home(project, task_name)
        body = await api.body(request)
        if body is None:
            return JSONResponse(api.failure("the body must be a JSON object {note, by}", ""), 400)
        note, by = str(body.get("note") or ""), str(body.get("by") or "")
        temporal = await asyncio.to_thread(actions.lives_on_temporal, project, task_name)
        try:
            if temporal:
                said = await asyncio.to_thread(actions.signal, project, task_name, verb, note, actions.clone(by))
            elif verb in actions.ASKS:
                said = await asyncio.to_thread(actions.ask, plane, task_name)
            else:
                said = await asyncio.to_thread(control.answer, where, task_name, verb, note if verb != "skip" else "",
                                               actions.clone(by))
        except SpecdError as exc:
            return JSONResponse(api.failure(redact(exc.message), redact(exc.fix or "")), 400)
        after = actions.then(verb, task_name, plane is not None, temporal, page=False)
        return JSONResponse({"ok": True, "task": task_name, "said": redact(said), "next": after, "error": None})

    routes = [
        Route("/api/tasks/{task}/{verb}", api_answer, methods=["POST"]),
        Route("/", tasks), Route("/rows", tasks_rows), Route("/events", tasks_events),
        Route("/tasks/{task}", task), Route("/tasks/{task}/events", task_events),
        Route("/tasks/{task}/live", task_live),
        Route("/tasks/{task}/steps/{n:int}", step), Route("/tasks/{task}/files/{path:path}", document),
        Route("/tasks/{task}/held/{path:path}", held),
        Route("/tasks/{task}/{verb}", act, methods=["GET", "POST"]),
    ]
    not_found, guard_refused = refusals.handlers(project, page)
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found})
    app.add_middleware(fresh.Secrets, root=project.root)  # inside the Guard: only a request with the token looks
    app.add_middleware(auth.Guard, token=token, refuse=guard_refused)
    app.add_middleware(replies.JsonSuffix)  # outermost: the Guard's refusals know JSON was asked too
    return app
