"""specd's filtering proxy on its own: which hosts a list lets through, and what a client gets either way."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from specd.system import proxy

ROOT = Path(__file__).resolve().parents[2]


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


PROXY_CHILD = """
import sys, time
from specd.system import proxy
print(proxy.socket_for(tuple(sys.argv[1:])), flush=True)
time.sleep(60)
"""


def test_a_wildcard_rule_reaches_no_loopback_address_a_name_under_it_resolves_to(echo: int, tmp_path: Path) -> None:
    """Whoever owns a name under a listed ``*.domain`` chooses its address: pointed at this machine's loopback
    (or the cloud's metadata service), it is refused. The proxy runs in a mount namespace whose /etc/hosts says
    so (a real resolution, no network needed); the same name listed on its own still goes through."""
    from specd.system import jail

    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n127.0.0.1 svc.attacker.example\n")
    for rules, allowed in (([f"*.attacker.example:{echo}"], False), ([f"svc.attacker.example:{echo}"], True)):
        child = subprocess.Popen(
            ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(hosts), "/etc/hosts", "--die-with-parent", "--",
             sys.executable, "-c", PROXY_CHILD, *rules],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert child.stdout is not None
            path = child.stdout.readline().strip()
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(10)
                client.connect(path)
                client.sendall(f"CONNECT svc.attacker.example:{echo} HTTP/1.1\r\n\r\n".encode())
                answer = client.recv(4096)
                if answer.startswith(b"HTTP/1.1 200"):
                    client.sendall(b"hello")
                    answer += client.recv(100)
                else:
                    while chunk := client.recv(4096):
                        answer += chunk
        finally:
            child.kill()
            child.wait()
        if allowed:
            assert answer.startswith(b"HTTP/1.1 200"), answer
            assert answer.endswith(b"echo:hello")  # the listed name reached the loopback service
        else:
            assert answer.startswith(b"HTTP/1.1 403"), answer
            assert b"resolves to 127.0.0.1, which is not a public address" in answer
            assert b"svc.attacker.example" in answer


def test_only_public_addresses_pass_a_wildcard_and_a_hosts_own_rule_comes_first() -> None:
    assert proxy.addresses("127.0.0.1", 80, wildcard=False) == [("127.0.0.1", 80)]
    for private in ("127.0.0.1", "169.254.169.254", "10.0.0.5", "[::1]"):
        with pytest.raises(PermissionError, match="not a public address"):
            proxy.addresses(private, 443, wildcard=True)
    assert proxy.addresses("8.8.8.8", 443, wildcard=True) == [("8.8.8.8", 443)]
    assert proxy.rule_for(("*.example.com", "api.example.com"), "api.example.com", 443) == "api.example.com"
    assert proxy.rule_for(("*.example.com",), "a.example.com", 443) == "*.example.com"
