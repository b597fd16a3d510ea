"""What the fake APIs share: a threaded HTTP server on 127.0.0.1, a script of replies, and a responder after it.

Each fake (fake_anthropic.py, fake_openai.py) gives its handler class and what to answer when both run dry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class ScriptedServer(Generic[R]):
    def __init__(self, handler: type[BaseHTTPRequestHandler], script: list[R] | None,
                 responder: Callable[[dict[str, Any]], R] | None, exhausted: Callable[[], R]) -> None:
        self.script: list[R] = list(script or [])
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._exhausted = exhausted
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: R) -> None:
        with self._lock:
            self.script.extend(replies)

    def start(self) -> Any:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_reply(self, body: dict[str, Any]) -> R:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return self._exhausted()
