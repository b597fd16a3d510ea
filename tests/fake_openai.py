"""A fake OpenAI-compatible chat completions server: real HTTP on 127.0.0.1, scripted per test.

The real ``openai`` client is pointed at it with ``base_url`` (``<url>/v1``), so tests exercise the SDK's
own HTTP layer and retries instead of a mock of them. Each ``POST /v1/chat/completions`` takes the next
reply from the script (or asks ``responder``); when both run out the server answers 400, which the SDK
does not retry, so a test with too short a script fails fast. ``requests`` records every call with its
headers and body. Usage is ``len(json) // 4`` tokens per message; the prefix of messages that equals the
previous request's is reported as cached, the way servers with prefix caching report it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_server import ScriptedServer


@dataclass
class Reply:
    kind: str = "message"  # message | error
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    status: int = 200
    completion_tokens: int | None = None
    usage: bool = True  # False: the response carries no usage, as some local servers send it


_ids = itertools.count(1)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"call_{next(_ids):04d}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def message(*calls: dict[str, Any], text: str | None = None) -> Reply:
    return Reply(content=text, tool_calls=list(calls), finish_reason="tool_calls" if calls else "stop")


def complete(outcome: str = "done", summary: str = "finished", **extra: Any) -> Reply:
    return message(call("complete_step", outcome=outcome, summary=summary, **extra))


def error(status: int) -> Reply:
    return Reply(kind="error", status=status)


def tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, sort_keys=True)) // 4)


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool`` messages at the end of a request: the results of the previous reply's calls."""
    found = []
    for msg in reversed(body["messages"]):
        if msg["role"] != "tool":
            break
        found.insert(0, msg)
    return found


class FakeOpenAI(ScriptedServer[Reply]):
    """``with FakeOpenAI([...replies]) as server: ... server.base_url``."""

    def __init__(self, script: list[Reply] | None = None, *,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        super().__init__(_handler_for(self), script, responder, lambda: Reply(kind="error", status=400))
        self.usages: list[dict[str, Any]] = []  # what the server reported, per completed call
        self._last: list[Any] = []

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        messages = body.get("messages", [])
        with self._lock:
            same = next((i for i, (a, b) in enumerate(zip(messages, self._last, strict=False)) if a != b),
                        min(len(messages), len(self._last)))
            self._last = list(messages)
        prompt = tokens(body.get("tools") or []) + sum(tokens(m) for m in messages)
        cached = sum(tokens(m) for m in messages[:same])
        out = reply.completion_tokens or tokens([reply.content, reply.tool_calls])
        return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
                "prompt_tokens_details": {"cached_tokens": cached}}


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._lock:
                server.requests.append({"path": self.path, "headers": headers, "body": body})
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            reply = server.next_reply(body)
            if reply.kind == "error":
                return self._send(reply.status, {"error": {"message": "fake failure", "type": "server_error"}},
                                  {"retry-after-ms": "1"})
            usage = server.usage(body, reply)
            with server._lock:
                server.usages.append(usage)
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.tool_calls:
                message["tool_calls"] = reply.tool_calls
            return self._send(200, {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                                    "created": 0, "model": body.get("model"), "usage": usage if reply.usage else None,
                                    "choices": [{"index": 0, "message": message,
                                                 "finish_reason": reply.finish_reason}]})

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

    return Handler
