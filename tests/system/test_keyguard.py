"""specd's key guard, between a real HTTP client and a real local upstream: what it signs, what it passes on
as it is, how it streams, and what it says when the upstream is gone."""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from specd.system import keyguard, standins

KEY = "sk-ant-api03-REALKEY-0123456789abcdef"


class Upstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[dict[str, Any]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that hangs up (the guard refusing a certificate) is part of a test."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/base"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Upstream

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "body": body})
        if self.path.endswith("stream=1"):  # chunked, as a streamed reply comes: three events
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for n in range(3):
                data = f"data: {n}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")
            return
        data = json.dumps({"ok": True}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _guarded(upstream_url: str, **keys: str) -> tuple[dict[str, str], int]:
    child = dict(keys)
    [where] = standins.shield("claude_code", {"ANTHROPIC_BASE_URL": upstream_url}, child)
    return child, int(where.rpartition(":")[2])


def test_a_request_with_the_stand_in_goes_on_with_the_key_and_one_without_goes_on_as_it_is(
        upstream: Upstream) -> None:
    child, port = _guarded(upstream.url, ANTHROPIC_API_KEY=KEY, ANTHROPIC_AUTH_TOKEN="tok-REAL-0123456789")
    assert child["ANTHROPIC_API_KEY"].startswith("specd-stand-in-")
    assert KEY not in json.dumps(child)
    assert "tok-REAL" not in json.dumps(child)
    assert child["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{port}"

    client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # one connection, kept alive
    client.request("POST", "/v1/messages", body=b'{"a": 1}', headers={
        "x-api-key": child["ANTHROPIC_API_KEY"], "Authorization": f"Bearer {child['ANTHROPIC_AUTH_TOKEN']}"})
    first = client.getresponse()
    assert (first.status, json.loads(first.read())) == (201, {"ok": True})
    client.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": "someone-elses-key"})
    second = client.getresponse()
    assert second.status == 201
    second.read()

    signed, passed = upstream.seen
    assert signed["path"] == "/base/v1/messages"  # the upstream's own path kept
    assert signed["headers"]["x-api-key"] == KEY
    assert signed["headers"]["authorization"] == "Bearer tok-REAL-0123456789"
    assert signed["body"] == b'{"a": 1}'
    assert passed["headers"]["x-api-key"] == "someone-elses-key"  # nothing of the user's added


def test_a_streamed_reply_arrives_whole_and_a_chunked_request_is_read(upstream: Upstream) -> None:
    child, port = _guarded(upstream.url, ANTHROPIC_API_KEY=KEY)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /v1/messages?stream=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     b"x-api-key: " + child["ANTHROPIC_API_KEY"].encode() + b"\r\n\r\n"
                     b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        reply = http.client.HTTPResponse(sock)
        reply.begin()
        assert reply.status == 200
        assert reply.read() == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    [seen] = upstream.seen
    assert seen["body"] == b"hello world"
    assert seen["headers"]["x-api-key"] == KEY


def test_an_upstream_that_is_gone_is_a_502_that_names_it() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        gone = free.getsockname()[1]
    child, port = _guarded(f"http://127.0.0.1:{gone}", ANTHROPIC_API_KEY=KEY)
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    client.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": child["ANTHROPIC_API_KEY"]})
    reply = client.getresponse()
    said = json.loads(reply.read())
    assert reply.status == 502
    assert f"could not reach 127.0.0.1:{gone}" in said["error"]["message"]
    assert KEY not in json.dumps(said)


def test_only_claude_code_signing_in_by_key_token_or_login_is_guarded(tmp_path: Path) -> None:
    assert standins.shield("codex", {}, {"OPENAI_API_KEY": "x"}) == ()
    (tmp_path / "copy").mkdir()
    signed_out = {"HOME": str(tmp_path)}  # no claude login of the user's: nothing to keep out
    assert standins.shield("claude_code", signed_out, {"CLAUDE_CONFIG_DIR": str(tmp_path / "copy")}) == ()
    # ...but a copy seeded before the user signed out loses its real tokens, and nothing stands in for them
    stale = tmp_path / "copy" / ".credentials.json"
    stale.write_text(json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-STALE"}, "mcpOAuth": {}}))
    assert standins.shield("claude_code", signed_out, {"CLAUDE_CONFIG_DIR": str(tmp_path / "copy")}) == ()
    assert json.loads(stale.read_text()) == {"mcpOAuth": {}}
    stale.write_text(json.dumps({"claudeAiOauth": "not an object the agent should have written"}))
    assert standins.shield("claude_code", signed_out, {"CLAUDE_CONFIG_DIR": str(tmp_path / "copy")}) == ()
    stale.unlink()
    os.mkfifo(stale)  # left by the agent: read without blocking, and left alone
    assert standins.shield("claude_code", signed_out, {"CLAUDE_CONFIG_DIR": str(tmp_path / "copy")}) == ()
    stale.unlink()
    child = {"CLAUDE_CODE_OAUTH_TOKEN": KEY}
    assert standins.shield("claude_code", {}, child) != ()
    assert child["CLAUDE_CODE_OAUTH_TOKEN"].startswith("specd-stand-in-")
    foundry = {"ANTHROPIC_FOUNDRY_RESOURCE": "my-resource", "CLAUDE_CODE_USE_FOUNDRY": "1"}
    child = {**foundry, "ANTHROPIC_FOUNDRY_API_KEY": KEY}
    [where] = standins.shield("claude_code", {**signed_out, **foundry}, child)
    assert child["ANTHROPIC_FOUNDRY_API_KEY"].startswith("specd-stand-in-")
    assert child["ANTHROPIC_FOUNDRY_BASE_URL"] == f"http://{where}"
    assert "ANTHROPIC_FOUNDRY_RESOURCE" not in child  # the base URL and a resource exclude each other
    [guard] = [g for g in keyguard._guards.values() if g.server_address[1] == int(where.rpartition(":")[2])]
    assert (guard.host, guard.port, guard.prefix) == ("my-resource.services.ai.azure.com", 443, "/anthropic")
    child = {"ANTHROPIC_API_KEY": KEY}
    assert standins.shield("claude_code", {"ANTHROPIC_BASE_URL": "not a url"}, child) == ()
    assert child["ANTHROPIC_API_KEY"] == KEY  # left as it was: Claude Code reports the bad URL itself


def test_a_google_key_in_its_header_or_in_the_query_is_put_in(upstream: Upstream) -> None:
    child = {"GEMINI_API_KEY": KEY}
    [where] = standins.shield("gemini", {"GOOGLE_GEMINI_BASE_URL": upstream.url}, child)
    assert child["GOOGLE_GEMINI_BASE_URL"] == f"http://{where}"
    stand_in = child["GEMINI_API_KEY"]
    client = http.client.HTTPConnection("127.0.0.1", int(where.rpartition(":")[2]), timeout=10)
    turn = "/v1beta/models/gemini-2.5-pro:generateContent"
    for path, headers in ((f"/v1beta/models?alt=sse&key={stand_in}", {}), (turn, {"x-goog-api-key": stand_in})):
        client.request("POST", path, body=b"{}", headers=headers)
        client.getresponse().read()
    in_query, in_header = upstream.seen
    assert in_query["path"] == f"/base/v1beta/models?alt=sse&key={KEY}"
    assert in_header["path"] == "/base/v1beta/models/gemini-2.5-pro:generateContent"
    assert in_header["headers"]["x-goog-api-key"] == KEY
    assert standins.shield("gemini", {"GOOGLE_GENAI_USE_VERTEXAI": "true"}, {"GEMINI_API_KEY": KEY}) == ()


def test_an_absolute_url_is_refused_so_no_other_host_is_named_to_the_api(upstream: Upstream) -> None:
    child, port = _guarded(upstream.url, ANTHROPIC_API_KEY=KEY)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST http://evil.example/v1/messages HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 2\r\n"
                     b"x-api-key: " + child["ANTHROPIC_API_KEY"].encode() + b"\r\n\r\n{}")
        reply = http.client.HTTPResponse(sock)
        reply.begin()
        assert reply.status == 400
    assert upstream.seen == []  # nothing went on, signed or not


def test_connections_past_the_limit_are_closed_and_a_freed_slot_is_served_again(
        upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyguard, "CONNECTIONS", 2)
    child, port = _guarded(upstream.url + "/limited", ANTHROPIC_API_KEY=KEY)  # a guard of its own, made now
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
    for sock in held:  # each is being served (the slot taken) once its first request is answered
        sock.sendall(b"POST /x HTTP/1.1\r\nHost: g\r\nContent-Length: 0\r\n\r\n")
        reply = http.client.HTTPResponse(sock)
        reply.begin()
        reply.read()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as third:
        third.sendall(b"POST /x HTTP/1.1\r\nHost: g\r\nContent-Length: 0\r\n\r\n")
        assert third.recv(100) == b""  # closed unanswered
    held.pop().close()
    deadline = time.monotonic() + 30  # the slot comes back once its thread has seen the close
    while True:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            client.request("POST", "/x", body=b"{}")
            assert client.getresponse().status == 201
            break
        except (ConnectionError, http.client.RemoteDisconnected):
            assert time.monotonic() < deadline
    held[0].close()


def test_an_https_api_is_reached_with_its_certificate_checked(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The API the guard signs for is an HTTPS one (Anthropic's): a TLS connection whose certificate is checked
    against the trusted ones (here one made for the test, trusted through SSL_CERT_FILE)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                           "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                           "-addext", "subjectAltName=DNS:localhost"], capture_output=True, check=False)
    assert made.returncode == 0, made.stderr
    server = Upstream()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://localhost:{server.server_address[1]}/base"
        child, port = _guarded(url, ANTHROPIC_API_KEY=KEY)
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        client.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": child["ANTHROPIC_API_KEY"]})
        untrusted = client.getresponse()
        assert untrusted.status == 502  # a certificate nobody trusts: refused, the key never sent
        assert "CERTIFICATE_VERIFY_FAILED" in untrusted.read().decode()
        assert server.seen == []
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        client.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": child["ANTHROPIC_API_KEY"]})
        assert client.getresponse().status == 201
        assert server.seen[0]["headers"]["x-api-key"] == KEY
    finally:
        server.shutdown()
        server.server_close()


def test_a_logins_copy_holds_stand_ins_and_the_guard_signs_with_the_users_login_as_it_is_now(
        upstream: Upstream, tmp_path: Path) -> None:
    """A `claude login`'s tokens (and a console login's primaryApiKey) in the task's copy become stand-ins,
    written over a link the agent left there; the guard reads the user's own login at each request."""
    home, copy, outside = tmp_path / "home", tmp_path / "copy", tmp_path / "users-file.txt"
    (home / ".claude").mkdir(parents=True)
    copy.mkdir()
    outside.write_text("the user's", encoding="utf-8")

    def login(access: str, expires_in_s: float) -> None:
        (home / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {
            "accessToken": access, "refreshToken": "sk-ant-ort01-REFRESH", "subscriptionType": "max",
            "scopes": ["user:inference", "user:profile", "user:sessions:claude_code"],
            "expiresAt": int((time.time() + expires_in_s) * 1000)}}), encoding="utf-8")

    login("sk-ant-oat01-FIRST", 3600)
    (home / ".claude.json").write_text(json.dumps({"primaryApiKey": KEY, "userID": "u"}), encoding="utf-8")
    (copy / ".credentials.json").write_text((home / ".claude" / ".credentials.json").read_text(), encoding="utf-8")
    (copy / ".claude.json").symlink_to(outside)  # left by the agent: specd writes over it, never through it
    env = {"HOME": str(home), "ANTHROPIC_BASE_URL": upstream.url}
    child = {"CLAUDE_CONFIG_DIR": str(copy)}
    [where] = standins.shield("claude_code", env, child)  # the login's and the console key's: one guard
    port = int(where.rpartition(":")[2])
    assert child["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{port}"
    assert outside.read_text(encoding="utf-8") == "the user's"
    written = (copy / ".credentials.json").read_text() + (copy / ".claude.json").read_text()
    assert "FIRST" not in written
    assert "REFRESH" not in written
    assert KEY not in written
    entry = json.loads((copy / ".credentials.json").read_text())["claudeAiOauth"]
    assert entry["subscriptionType"] == "max"  # the rest of the login is kept
    assert entry["scopes"] == ["user:inference"]  # as a `claude setup-token` token: no call past the guard
    assert entry["expiresAt"] > time.time() * 1000 + 50 * 365 * 86400_000  # never refreshed in the jail
    stand_in_key = json.loads((copy / ".claude.json").read_text())["primaryApiKey"]

    def call(**headers: str) -> int:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        client.request("POST", "/v1/messages", body=b"{}", headers=headers)
        reply = client.getresponse()
        said = reply.read()
        client.close()
        if reply.status == 401:
            assert b"expired at" in said
            assert b"claude auth login" in said
        return reply.status

    bearer = f"Bearer {entry['accessToken']}"
    assert call(Authorization=bearer) == 201
    login("sk-ant-oat01-SECOND", 3600)  # the user's own `claude` refreshed its login
    assert call(Authorization=bearer) == 201
    assert call(**{"x-api-key": stand_in_key}) == 201
    assert [seen["headers"].get("authorization") or seen["headers"]["x-api-key"] for seen in upstream.seen] == [
        "Bearer sk-ant-oat01-FIRST", "Bearer sk-ant-oat01-SECOND", KEY]
    login("sk-ant-oat01-SECOND", -1)  # past its expiry: refused here, sent nowhere
    assert call(Authorization=bearer) == 401
    assert len(upstream.seen) == 3


@pytest.mark.parametrize(("api", "path"), [
    ("anthropic", "/v1/files"), ("anthropic", "/v1/messages/batches"), ("anthropic", "/v1/vaults/v1/credentials"),
    ("anthropic", "/api/oauth/claude_cli/create_api_key"), ("anthropic", "/v1/models/../files"),
    ("anthropic", "/v1/messages/..%2Ffiles"), ("gemini", "/v1beta/files"), ("gemini", "/v1beta/cachedContents"),
    ("gemini", "/v1beta/models/../files"), ("openai", "/v1/files"), ("openai", "/v1/organization/admin_api_keys"),
    ("openai", "/v1/vector_stores"),
])
def test_the_stand_in_signs_only_the_models_own_calls(upstream: Upstream, api: str, path: str) -> None:
    """The key opens more than the model's turns (the account's files, batches, vaults; a login's token mints
    API keys): with the stand-in, anything else is a 403 from the guard, and the API never sees it."""
    where = keyguard.guarded(api, upstream.url, KEY)
    assert where is not None
    base, stand_in, _ = where
    client = http.client.HTTPConnection("127.0.0.1", int(base.rpartition(":")[2]), timeout=10)
    client.request("POST", f"{path}?key={stand_in}", body=b"{}", headers={
        "x-api-key": stand_in, "Authorization": f"Bearer {stand_in}", "x-goog-api-key": stand_in})
    reply = client.getresponse()
    said = json.loads(reply.read())
    assert reply.status == 403
    assert said["error"]["type"] == "permission_error"
    assert "signs only the model's own calls" in said["error"]["message"]
    client.request("POST", path, body=b"{}", headers={"x-api-key": "their-own"})  # no stand-in: on, as it is
    assert client.getresponse().status == 201
    client.close()
    [passed] = upstream.seen
    assert passed["headers"]["x-api-key"] == "their-own"
    assert KEY.encode() not in json.dumps(upstream.seen, default=repr).encode()


def test_a_login_and_a_foundry_key_get_a_guard_each_and_the_jail_reaches_both(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {
        "accessToken": "sk-ant-oat01-X", "expiresAt": int(time.time() * 1000) + 3600_000}}))
    (tmp_path / "copy").mkdir()
    env = {"HOME": str(tmp_path), "ANTHROPIC_FOUNDRY_RESOURCE": "r"}
    child = {"CLAUDE_CONFIG_DIR": str(tmp_path / "copy"), "ANTHROPIC_FOUNDRY_API_KEY": KEY}
    rules = standins.shield("claude_code", env, child)
    assert len(rules) == 2  # two upstreams, two guards: both ports go on the jail's network list
    assert {child["ANTHROPIC_BASE_URL"], child["ANTHROPIC_FOUNDRY_BASE_URL"]} == {f"http://{r}" for r in rules}
