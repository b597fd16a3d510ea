"""specd's filtering proxy on its own: which hosts a list lets through, and what a client gets either way."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from specd.system import proxy


@pytest.mark.parametrize(("rules", "host", "port", "allowed"), [
    (("api.example.com",), "api.example.com", 443, True),
    (("api.example.com",), "API.Example.com.", 80, True),
    (("api.example.com",), "api.example.com", 22, False),  # a bare name means the web's ports only
    (("api.example.com",), "evil.example.com", 443, False),
    (("*.example.com",), "a.b.example.com", 443, True),
    (("*.example.com",), "example.com", 443, False),
    (("*.example.com",), "badexample.com", 443, False),
    (("127.0.0.1:8080",), "127.0.0.1", 8080, True),
    (("127.0.0.1:8080",), "127.0.0.1", 8081, False),
    (("[::1]:9000",), "[::1]", 9000, True),
    ((), "api.example.com", 443, False),
])
def test_a_list_allows_its_hosts_and_nothing_else(rules: tuple[str, ...], host: str, port: int,
                                                   allowed: bool) -> None:
    assert proxy.allows(rules, host, port) is allowed


def test_request_heads_name_their_target() -> None:
    assert proxy.target_of(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")[:3] == (
        "CONNECT", "api.example.com", 443)
    method, host, port, forward = proxy.target_of(b"GET http://127.0.0.1:81/v1/x?q=1 HTTP/1.1\r\nHost: h\r\n\r\n")
    assert (method, host, port) == ("GET", "127.0.0.1", 81)
    assert forward.startswith(b"GET /v1/x?q=1 HTTP/1.1\r\nHost: h")  # origin form for the server
    with pytest.raises(ValueError, match="/relative"):
        proxy.target_of(b"GET /relative HTTP/1.1\r\n\r\n")


@pytest.fixture
def echo() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"echo:" + conn.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def _ask(sock_path: str, head: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(sock_path)
        client.sendall(head)
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
            if b"echo:" in answer or b"Connection: close" in answer and answer.endswith(b"\n"):
                break
        return answer


def test_the_proxy_tunnels_to_a_listed_host_and_refuses_the_rest(echo: int) -> None:
    rules = (f"127.0.0.1:{echo}",)
    path = str(proxy.socket_for(rules))
    assert proxy.socket_for(rules) == proxy.socket_for(rules)  # one proxy per list
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(path)
        client.sendall(f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
        assert client.recv(4096).startswith(b"HTTP/1.1 200")
        client.sendall(b"hello")
        assert client.recv(100) == b"echo:hello"
    refused = _ask(path, f"CONNECT 127.0.0.1:{echo + 1 if echo < 65535 else 1} HTTP/1.1\r\n\r\n".encode())
    assert refused.startswith(b"HTTP/1.1 403")
    assert b"network:" in refused
    assert proxy.denied(rules)
