"""A fake OpenAI Responses API, as the real Codex CLI speaks it: real HTTP on 127.0.0.1, SSE, scripted per test.

Codex is pointed at it through the model provider specd defines (``agent.base_url``). Each ``POST
/v1/responses`` takes the next reply from the script (or asks ``responder``) and streams it the way the API
does: ``response.created``, one ``response.output_item.done`` per output item, then ``response.completed``
with the usage. An item is a message (text, or the final JSON the output schema asks for) or a function
call of Codex's own tools (``exec_command`` runs a shell command, so the model writes files with it). When
the script runs out the server answers 400, which Codex does not retry, so a short script fails fast.

Usage is ``len(json) // 4`` tokens per input item; the prefix of items equal to the previous request's is
reported as cached (``input_tokens_details.cached_tokens``), as OpenAI's prompt caching does. ``requests``
logs every call; ``usages`` what was reported for each.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_server import ScriptedServer


@dataclass
class Reply:
    kind: str = "message"  # message | error
    items: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    output_tokens: int | None = None


_ids = itertools.count(1)


def text(body: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": f"msg_{next(_ids):04d}", "status": "completed",
            "content": [{"type": "output_text", "text": body, "annotations": []}]}


def shell(command: str, *, login: bool = False) -> dict[str, Any]:
    """Codex's ``exec_command`` tool: the command runs in Codex's shell, in the project. Not a login shell by
    default, so it keeps the PATH specd gave Codex (a login shell's /etc/profile sets its own)."""
    return {"type": "function_call", "id": f"fc_{next(_ids):04d}", "call_id": f"call_{next(_ids):04d}",
            "name": "exec_command", "arguments": json.dumps({"cmd": command, "tty": False, "login": login,
                                                             "yield_time_ms": 30000})}


RUNNING = re.compile(r"Process running with session ID (\d+)")


def poll(session: int) -> dict[str, Any]:
    """Codex's ``write_stdin`` with nothing to write: waits for more of a command that outlived its first wait."""
    return {"type": "function_call", "id": f"fc_{next(_ids):04d}", "call_id": f"call_{next(_ids):04d}",
            "name": "write_stdin", "arguments": json.dumps({"session_id": session, "chars": "",
                                                             "yield_time_ms": 300000})}


def still_running(body: dict[str, Any]) -> int | None:
    """The session of a command the request says is still running (Codex returns after its wait, at most
    30 s, with the command's session id), so a fake model can poll it until it ends."""
    said = outputs(body)
    found = RUNNING.search(said[-1]) if said else None
    return int(found.group(1)) if found else None


def reply(*items: dict[str, Any] | str) -> Reply:
    return Reply(items=[text(i) if isinstance(i, str) else i for i in items])


def final(outcome: str = "done", summary: str = "finished", *, said: str = "", **extra: Any) -> Reply:
    """The last message of a turn: the JSON object ``--output-schema`` asked for, after ``said`` if given (a
    reply with no tool call ends Codex's turn, so text meant to come first must share the reply)."""
    report = json.dumps({"outcome": outcome, "summary": summary, **extra})
    return reply(said, report) if said else reply(report)


def error(status: int) -> Reply:
    return Reply(kind="error", status=status)


def tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, sort_keys=True)) // 4)


def outputs(body: dict[str, Any]) -> list[str]:
    """The outputs of the function calls sent back in a request (what Codex's tools printed)."""
    return [str(item.get("output")) for item in body.get("input", []) if item.get("type") == "function_call_output"]


def user_text(body: dict[str, Any]) -> str:
    """Every text of every user message of a request, joined (Codex adds its own context messages)."""
    parts = [str(block.get("text", "")) for item in body.get("input", []) if item.get("role") == "user"
             for block in item.get("content", []) if isinstance(block, dict)]
    return "\n".join(parts)


class FakeCodexAPI(ScriptedServer[Reply]):
    """``with FakeCodexAPI([...replies]) as server: ... server.base_url``."""

    def __init__(self, script: list[Reply] | None = None, *,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        super().__init__(_handler_for(self), script, responder, lambda: Reply(kind="error", status=400))
        self.usages: list[dict[str, Any]] = []
        self._last: list[Any] = []

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/responses")]

    def usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        items = body.get("input", [])
        with self._lock:
            same = next((i for i, (a, b) in enumerate(zip(items, self._last, strict=False)) if a != b),
                        min(len(items), len(self._last)))
            self._last = list(items)
        prompt = tokens(body.get("tools") or []) + sum(tokens(i) for i in items)
        cached = sum(tokens(i) for i in items[:same])
        out = reply.output_tokens or tokens(reply.items)
        return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + out}


def _handler_for(server: FakeCodexAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # a models list or a probe: nothing to offer
            with server._lock:
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": {}})
            self._send(404, "application/json", json.dumps({"error": {"message": "not here"}}).encode())

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._lock:
                server.requests.append({"path": self.path, "headers": headers, "body": body})
            if not self.path.rstrip("/").endswith("/responses"):
                return self._send(404, "application/json", b'{"error": {"message": "no route"}}')
            answer = server.next_reply(body)
            if answer.kind == "error":
                data = {"error": {"message": "fake failure", "type": "invalid_request_error", "code": None}}
                return self._send(answer.status, "application/json", json.dumps(data).encode())
            usage = server.usage(body, answer)
            with server._lock:
                server.usages.append(usage)
                rid = f"resp_{len(server.requests):04d}"
            events = [{"type": "response.created", "response": {"id": rid, "status": "in_progress"}}]
            events += [{"type": "response.output_item.done", "output_index": i, "item": item}
                       for i, item in enumerate(answer.items)]
            events.append({"type": "response.completed",
                           "response": {"id": rid, "status": "completed", "output": answer.items, "usage": usage}})
            stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
            return self._send(200, "text/event-stream", stream.encode())

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

    return Handler
