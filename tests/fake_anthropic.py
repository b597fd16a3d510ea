"""A fake Anthropic Messages API: real HTTP on 127.0.0.1, JSON and SSE, scripted per test.

The real ``anthropic`` client is pointed at it with ``base_url`` (or
``ANTHROPIC_BASE_URL``), so tests exercise the SDK's own HTTP layer, retries
and stream parsing instead of a mock of them. Each request takes the next
reply from the script; when the script runs out the server answers 400, which
the SDK does not retry, so a test with too short a script fails fast.

Prompt caching is simulated the way the API bills it (tests/fake_cache.py):
breakpoints, the 1,024-token minimum, 5-minute and 1-hour lifetimes refreshed
on each read, and a clock a test can move on (``server.cache.advance``).

It also serves what the real Claude Code CLI sends (seen on the wire with
2.1.x): ``POST /v1/messages?beta=true`` (streamed, ``x-api-key``, a
``anthropic-beta`` list), ``POST /v1/messages/count_tokens``, and a ``HEAD /``
reachability probe. ``requests`` logs every call with its path and headers;
``bodies`` holds only the message requests, which are the ones that take a
scripted reply.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_cache import PromptCache, segments
from fake_server import ScriptedServer
from fake_tokens import tokens


@dataclass
class Reply:
    kind: str = "message"  # message | error | sse_error | drop
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    error_type: str = "api_error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop_after: int = 2  # for kind=drop: SSE events sent before the connection is cut
    output_tokens: int | None = None


def text(body: str) -> dict[str, Any]:
    return {"type": "text", "text": body}


_ids = itertools.count(1)


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": arguments}


def message(*blocks: dict[str, Any] | str, stop_reason: str | None = None, delay: float = 0.0) -> Reply:
    content = [text(b) if isinstance(b, str) else b for b in blocks]
    reason = stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
    return Reply(blocks=content, stop_reason=reason, delay=delay)


def complete(outcome: str = "done", summary: str = "finished", **extra: Any) -> Reply:
    return message(tool("complete_step", outcome=outcome, summary=summary, **extra))


def error(
    status: int, *, retry_after: float | None = None, retry_after_ms: int | None = 1, error_type: str = ""
) -> Reply:
    # retry-after-ms wins over retry-after in the SDK; 1 ms keeps SDK retries instant in tests.
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    elif retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    kinds = {429: "rate_limit_error", 529: "overloaded_error", 400: "invalid_request_error"}
    return Reply(kind="error", status=status, error_type=error_type or kinds.get(status, "api_error"), headers=headers)


def sse_error(error_type: str = "overloaded_error") -> Reply:
    return Reply(kind="sse_error", error_type=error_type)


def drop(after_events: int = 2) -> Reply:
    return Reply(kind="drop", drop_after=after_events)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last user message."""
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


class FakeAnthropic(ScriptedServer[Reply]):
    """``with FakeAnthropic([...replies]) as server: ... server.url``."""

    def __init__(
        self, script: list[Reply] | None = None, *, responder: Callable[[dict[str, Any]], Reply] | None = None,
        cache: PromptCache | None = None,
    ) -> None:
        super().__init__(_handler_for(self), script, responder, lambda: Reply(
            kind="error", status=400, error_type="invalid_request_error", headers={"x-fake": "script exhausted"}))
        self.usages: list[dict[str, int]] = []  # what the server reported for each completed message
        self.cache = cache or PromptCache()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if _route(r["path"]) == "/v1/messages"]


def _handler_for(server: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def do_POST(self) -> None:
            try:
                self._post()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (a timeout test); nothing to answer

        def do_HEAD(self) -> None:  # Claude Code probes the base URL before its first call
            self._log({})
            self._send(200, b"", "text/plain", {})

        def do_GET(self) -> None:
            self._log({})
            self._error(404, "not_found_error", self.path, {})

        def _log(self, body: dict[str, Any]) -> dict[str, str]:
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._lock:
                server.requests.append({"path": self.path, "headers": headers, "body": body})
            return headers

        def _post(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = self._log(body)
            auth = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
            if not auth:
                return self._error(401, "authentication_error", "missing x-api-key or Authorization", {})
            route = _route(self.path)
            if route == "/v1/messages/count_tokens":
                count = json.dumps({"input_tokens": sum(part.tokens for part in segments(body))}).encode()
                return self._send(200, count, "application/json", {})
            if route != "/v1/messages":
                return self._error(404, "not_found_error", self.path, {})
            reply = server.next_reply(body)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.kind == "error":
                return self._error(reply.status, reply.error_type, "fake failure", reply.headers)
            usage = server.cache.account(body)
            usage["output_tokens"] = reply.output_tokens or sum(tokens(b) for b in reply.blocks) or 1
            msg = {"id": f"msg_{len(server.requests):04d}", "type": "message", "role": "assistant",
                   "model": body.get("model"), "content": reply.blocks, "stop_reason": reply.stop_reason,
                   "stop_sequence": None, "usage": usage}
            if body.get("stream"):
                return self._stream(msg, reply)
            server.usages.append(usage)
            return self._send(200, json.dumps(msg).encode(), "application/json", {})

        def _error(self, status: int, kind: str, text_: str, headers: dict[str, str]) -> None:
            payload = {"type": "error", "error": {"type": kind, "message": text_}}
            self._send(status, json.dumps(payload).encode(), "application/json", headers)

        def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            self.send_header("request-id", f"req_{len(server.requests):04d}")
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def _stream(self, msg: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")  # so a cut connection is detectably incomplete
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            events = list(_events(msg))
            if reply.kind == "sse_error":
                err = {"type": "error", "error": {"type": reply.error_type, "message": "fake stream failure"}}
                events = [*events[:1], ("error", err)]
            for n, (name, data) in enumerate(events):
                if reply.kind == "drop" and n >= reply.drop_after:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            if reply.kind == "message":
                with server._lock:
                    server.usages.append(dict(msg["usage"]))

    return Handler


def _route(path: str) -> str:
    """The path without its query (``?beta=true``) or a trailing slash."""
    return path.partition("?")[0].rstrip("/")


def _events(msg: dict[str, Any]) -> Any:
    usage = msg["usage"]
    start = {**msg, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            body = block["text"]
            for part in [body[: len(body) // 2], body[len(body) // 2 :]]:
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": part}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {**block, "input": {}}}
            raw = json.dumps(block["input"])
            for part in [raw[: len(raw) // 2], raw[len(raw) // 2 :]]:
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta", "partial_json": part}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}
