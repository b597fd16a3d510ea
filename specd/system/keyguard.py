"""A backend's API key kept out of its jail: the agent CLI signs with a stand-in, and specd puts the key in.

An agent CLI (Claude Code, Codex, the Gemini CLI) needs its API key, and its own shell commands, which the
model writes, inherit the CLI's environment: `env`, or `/proc/$PPID/environ`, put the key in what the model
reads, and from there anywhere. So a jailed CLI that signs in by key gets a stand-in instead (random for each
specd process, worth nothing anywhere else) and a base URL that names this guard: a plain-HTTP server of
specd's on this machine's loopback, which the jail reaches through the bridge's tunnel like any local API
server. A request that carries the stand-in (in ``x-api-key``, ``x-goog-api-key``, ``Authorization: Bearer``
or a ``key=`` query) is sent on to the one API the guard was made for, with the real key in its place, and the
reply streams back as it comes, but only for the model's own calls (:data:`CALLS`: a turn, its token count,
the models): the key opens more (the account's files, batches, vaults; a login's token even mints API keys),
and a request for that with the stand-in gets a 403. A request without the stand-in is sent on as it is, with
nothing of yours added. The model can still call its model through the guard, as it could with the key, but
it can no longer take the key away, or reach the rest of the account.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, urlsplit

from specd.system.bounded import Bounded

SIGNED = ("x-api-key", "x-goog-api-key")  # headers that carry the key as it is
# Said by one connection about itself, never passed on (RFC 9110 7.6.1), and the lengths, which are set anew.
HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
                 "trailer", "transfer-encoding", "upgrade", "host", "content-length"})
TIMEOUT = 600.0  # a long step's streamed reply may pause for minutes
CONNECTIONS = 64  # served at once (specd/system/bounded.py): an agent CLI keeps a few


# What each API's guard signs: the model's own calls (a turn, its token count, the models), matched on the path
# the CLI asked for. The key opens more (files, batches, vaults; a login's token even mints API keys): a
# request for any of that with the stand-in gets a 403 here, and goes nowhere.
_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]*"  # a model's name: never a dot segment or an escape
CALLS = {"anthropic": re.compile(rf"/v1/messages(/count_tokens)?|/v1/models(/{_ID})?"),
         "gemini": re.compile(rf"/v1(alpha|beta)?/models(/{_ID}(:(stream)?[gG]enerateContent|:countTokens"
                              rf"|:embedContent|:batchEmbedContents)?)?"),
         "openai": re.compile(rf"(/v1)?/(responses(/compact)?|chat/completions|models(/{_ID})?)")}


class Refused(Exception):
    """A key the guard will not send (a login past its expiry, a call that is not the model's): the agent gets
    ``status`` with ``message`` and ``fix``."""

    def __init__(self, message: str, fix: str, status: int = 401, kind: str = "authentication_error") -> None:
        super().__init__(f"{message}; fix: {fix}")
        self.status, self.kind = status, kind


class _Server(Bounded, ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str, api: str) -> None:
        self.room = threading.BoundedSemaphore(CONNECTIONS)
        self.api, self.calls = api, CALLS[api]
        super().__init__(("127.0.0.1", 0), _Relay)
        url = urlsplit(upstream)
        self.secure = url.scheme == "https"
        self.host = url.hostname or ""
        self.port = url.port or (443 if self.secure else 80)
        self.prefix = url.path.rstrip("/")
        self.swaps: dict[str, str] = {}  # stand-in -> the real key
        self.sources: dict[str, tuple[str, Callable[[], str]]] = {}  # stand-in -> (name, the key as it is now)

    def stand_in(self, real: str) -> str:
        for fake, key in self.swaps.items():
            if key == real:
                return fake
        fake = "specd-stand-in-" + secrets.token_hex(24)
        self.swaps[fake] = real
        return fake

    def stand_in_for(self, name: str, source: Callable[[], str]) -> str:
        """One stand-in for a key read anew at each request (a login's token, which its own CLI refreshes)."""
        for fake, (known, _) in self.sources.items():
            if known == name:
                self.sources[fake] = (name, source)
                return fake
        fake = "specd-stand-in-" + secrets.token_hex(24)
        self.sources[fake] = (name, source)
        return fake

    def real(self, value: str) -> str | None:
        """The key ``value`` stands for, None when it is no stand-in; :class:`Refused` from its source."""
        if value in self.swaps:
            return self.swaps[value]
        return self.sources[value][1]() if value in self.sources else None

    def sign(self, headers: dict[str, str], path: str) -> str:
        """The stand-in in a credential header or a ``key=`` query replaced by the key it stands for; the path."""
        if not self.calls.fullmatch(path.partition("?")[0]) and any(
                "specd-stand-in-" in text for text in (path, *headers.values())):
            raise Refused(f"specd's key guard signs only the model's own calls to the {self.api} API (a turn, "
                          f"its token count, the models), and {path.partition('?')[0]} is not one",
                          "none from the agent: the rest of the account (files, batches, vaults, keys) stays out "
                          "of its reach", 403, "permission_error")
        for name in list(headers):
            value = headers[name]
            if name.lower() in SIGNED and (real := self.real(value)) is not None:
                headers[name] = real
            elif name.lower() == "authorization" and (real := self.real(value.removeprefix("Bearer "))) is not None:
                headers[name] = "Bearer " + real
        if "key=specd-stand-in-" in path:
            base, _, query = path.partition("?")
            pairs = [pair.split("=", 1) if "=" in pair else [pair] for pair in query.split("&")]
            path = base + "?" + "&".join(
                f"key={quote(self.swaps[pair[1]], safe='')}" if pair[0] == "key" and len(pair) == 2
                and pair[1] in self.swaps else "=".join(pair) for pair in pairs)
        return path


class _Relay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    upstream: http.client.HTTPConnection | None = None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Nothing: what passes here is the agent's business, and its transcript keeps it."""

    def relay(self) -> None:
        if not self.path.startswith("/"):  # an absolute URL would name another host to the API's (domain fronting)
            self.send_error(400, "specd's key guard takes a path on its own API only")
            return
        body = self._body()
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
        try:
            path = self.server.sign(headers, self.path)
        except Refused as exc:
            self._fail(exc, exc.status, exc.kind)
            return
        try:
            reply = self._send(path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            self.upstream = None
            self._fail(exc)
            return
        self.send_response(reply.status, reply.reason)
        for name, value in reply.getheaders():
            if name.lower() not in HOP:
                self.send_header(name, value)
        sized = reply.length is not None or self.command == "HEAD" or reply.status in (204, 304)
        if reply.length is not None:
            self.send_header("Content-Length", str(reply.length))
        elif not sized:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._stream(reply, chunked=not sized)
        if reply.will_close and self.upstream is not None:  # the API ends this connection: the next makes its own
            self.upstream.close()
            self.upstream = None

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = relay

    def _send(self, path: str, body: bytes | None, headers: dict[str, str]) -> http.client.HTTPResponse:
        """The request on this connection's own connection upstream (made again once when it was closed)."""
        for attempt in (1, 2):
            fresh = self.upstream is None
            if self.upstream is None:
                kind = http.client.HTTPSConnection if self.server.secure else http.client.HTTPConnection
                self.upstream = kind(self.server.host, self.server.port, timeout=TIMEOUT)
            try:
                self.upstream.request(self.command, self.server.prefix + path, body=body, headers=headers)
                return self.upstream.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected):
                self.upstream.close()
                self.upstream = None
                if fresh or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def _stream(self, reply: http.client.HTTPResponse, chunked: bool) -> None:
        while data := reply.read1(65536):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            self.wfile.flush()  # a streamed reply's events reach the agent as they come
        reply.read()  # ends the reply (read1 never does), so the connection upstream takes the next request
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _fail(self, exc: BaseException, status: int = 502, kind: str = "api_error") -> None:
        where = f"{self.server.host}:{self.server.port}"
        message = str(exc) if status != 502 else f"specd's key guard could not reach {where}: {exc}"
        data = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


_guards: dict[tuple[int, str, str], _Server] = {}
_lock = threading.Lock()


def _guard(api: str, upstream: str) -> _Server:
    """The guard of ``upstream`` (an ``api`` of :data:`CALLS`) in this process, started on first use (a forked
    run starts its own)."""
    with _lock:
        key = (os.getpid(), api, upstream)
        if key not in _guards:
            server = _Server(upstream, api)
            threading.Thread(target=server.serve_forever, name="specd-keyguard", daemon=True).start()
            _guards[key] = server
        return _guards[key]


def guarded(api: str, upstream: str, key: str) -> tuple[str, str, str] | None:
    """(the guard's base URL, the stand-in for ``key``, the guard's ``127.0.0.1:PORT`` for the jail's network
    list), the guard sending the model's calls of ``api`` (:data:`CALLS`) on to ``upstream``; None when
    ``upstream`` is no URL it can reach (the CLI reports it as it would without specd)."""
    return _served(api, upstream, lambda server: server.stand_in(key))


def guarded_by(api: str, upstream: str, name: str, source: Callable[[], str]) -> tuple[str, str, str] | None:
    """As :func:`guarded`, for a key ``source`` reads anew at each request (:class:`Refused` when it will not
    do); ``name`` keeps one stand-in for it in this process."""
    return _served(api, upstream, lambda server: server.stand_in_for(name, source))


def _served(api: str, upstream: str, stand_in: Callable[[_Server], str]) -> tuple[str, str, str] | None:
    url = urlsplit(upstream)
    if url.scheme not in ("http", "https") or not url.hostname:
        return None
    server = _guard(api, upstream)
    port = server.server_address[1]
    return f"http://127.0.0.1:{port}", stand_in(server), f"127.0.0.1:{port}"
