"""A fake Gemini API (generativelanguage v1beta): real HTTP on 127.0.0.1, JSON and SSE, scripted per test.

The real ``gemini`` CLI is pointed at it with ``GOOGLE_GEMINI_BASE_URL``. What it serves is what the CLI
0.61 sends: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (the turns; each takes the next
scripted reply), ``:generateContent`` (the CLI's own side calls: routing, a next-speaker check, a loop
check; answered with a plain JSON object and never taking a scripted reply), and ``:countTokens``.
Anything else is answered 404 and logged in ``unknown`` so a test can see an unexpected call.

A reply is a list of parts: text, or a ``functionCall`` the CLI runs with its own tools (write_file,
run_shell_command, ...). Each turn reports ``usageMetadata`` with prompt, output and cached token counts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_server import ScriptedServer


@dataclass
class Reply:
    parts: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 1000
    output_tokens: int = 100
    cached_tokens: int = 0
    status: int = 200  # not 200: an API error with this status


def text(body: str) -> dict[str, Any]:
    return {"text": body}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}}


def reply(*parts: dict[str, Any] | str, prompt_tokens: int = 1000, output_tokens: int = 100,
          cached_tokens: int = 0) -> Reply:
    return Reply([text(p) if isinstance(p, str) else p for p in parts], prompt_tokens, output_tokens,
                 cached_tokens)


def outcome(value: str = "done", summary: str = "finished", *, prompt_tokens: int = 1000,
            output_tokens: int = 100, **extra: Any) -> Reply:
    """The final answer specd asks Gemini for: one JSON object as the last text."""
    return reply(json.dumps({"outcome": value, "summary": summary, **extra}), prompt_tokens=prompt_tokens,
                 output_tokens=output_tokens)


def error(status: int) -> Reply:
    return Reply(status=status)


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The functionResponse parts of a request's last turn (what Gemini's tools answered)."""
    contents = body.get("contents") or [{}]
    return [part["functionResponse"] for part in contents[-1].get("parts", []) if "functionResponse" in part]


class _Handler(BaseHTTPRequestHandler):
    server_ref: FakeGemini

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._record({})
        self._json(404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self._record(body)
        fake = self.server_ref
        path = self.path.split("?")[0]
        model = path.rpartition("/models/")[2].partition(":")[0]  # the API answers as the model asked for
        if path.endswith(":countTokens"):
            self._json(200, {"totalTokens": max(1, len(raw) // 4)})
        elif path.endswith(":generateContent"):
            self._json(200, _response([text(json.dumps(fake.side_answer(body)))], Reply(), model))
        elif path.endswith(":streamGenerateContent"):
            fake.turns.append(body)
            answer = fake.next_reply(body)
            if answer.status != 200:
                self._json(answer.status, {"error": {"code": answer.status, "message": "scripted failure",
                                                     "status": "INVALID_ARGUMENT"}})
                return
            self._sse(_response(answer.parts, answer, model))
        else:
            fake.unknown.append(f"POST {self.path}")
            self._json(404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})

    def _record(self, body: dict[str, Any]) -> None:
        self.server_ref.requests.append({"method": self.command, "path": self.path,
                                         "headers": dict(self.headers), "body": body})

    def _json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _sse(self, data: dict[str, Any]) -> None:
        payload = f"data: {json.dumps(data)}\r\n\r\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _response(parts: list[dict[str, Any]], answer: Reply, model: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": answer.prompt_tokens,
                              "candidatesTokenCount": answer.output_tokens,
                              "cachedContentTokenCount": answer.cached_tokens,
                              "totalTokenCount": answer.prompt_tokens + answer.output_tokens},
            "modelVersion": model}


def _side_answer(body: dict[str, Any]) -> dict[str, Any]:
    # The CLI's side questions ask for JSON by schema: who speaks next, is it looping, which model to route to.
    schema = (body.get("generationConfig") or {}).get("responseJsonSchema") or {}
    props = schema.get("properties") or {}
    if "next_speaker" in props:
        return {"reasoning": "the model finished", "next_speaker": "user"}
    if "is_stuck" in props or "unproductive_state_confidence" in props:
        return {"reasoning": "fine", "unproductive_state_confidence": 0.0, "is_stuck": False}
    if "complexity_score" in props:
        return {"complexity_reasoning": "a test", "complexity_score": 50}
    return {"reasoning": "default", "model_choice": "pro"}


class FakeGemini(ScriptedServer[Reply]):
    def __init__(self, script: list[Reply] | None = None,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        handler = type("Handler", (_Handler,), {})
        super().__init__(handler, script, responder, lambda: error(400))
        handler.server_ref = self
        self.turns: list[dict[str, Any]] = []
        self.unknown: list[str] = []
        self.side_answer: Callable[[dict[str, Any]], dict[str, Any]] = _side_answer
        self.turn_lock = threading.Lock()
