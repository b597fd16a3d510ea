"""The network as a list: a filtering proxy that specd runs for jailed processes.

A jail with its own network namespace has only a loopback of its own. It reaches the outside through one
unix socket bound into it, served here, on the host side: the proxy reads one HTTP request head (a
``CONNECT host:port`` for TLS, or an absolute-form ``GET http://host:port/...`` for plain HTTP), and relays
the bytes only when the host is on the list it was started with. Anything else gets a 403 that names the
setting to change. Names are resolved here, outside the jail; the jail has no DNS of its own.

One proxy per list, per process, started on first use and stopped at exit. Its socket lives in a 0700
folder of specd's, which no jail can see (each has a private /tmp).
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import socketserver
import tempfile
import threading
from pathlib import Path

from specd.system.bounded import Bounded
from specd.system.bridge import pump

HEAD_LIMIT = 64 * 1024  # a request head longer than this is not an HTTP client's
CONNECT_TIMEOUT = 30.0
CONNECTIONS = 256  # relayed at once (specd/system/bounded.py): a package manager opens dozens
WEB_PORTS = (443, 80)


def allows(rules: tuple[str, ...], host: str, port: int) -> bool:
    """``host:port`` on the list: ``name`` (ports 443 and 80), ``name:port``, ``*.domain`` (its subdomains)."""
    return rule_for(rules, host, port) is not None


def rule_for(rules: tuple[str, ...], host: str, port: int) -> str | None:
    """The rule that lets ``host:port`` through, the host's own before a ``*.domain``; None when none does."""
    host = host.strip("[]").lower().rstrip(".")
    found = None
    for rule in rules:
        name, _, wanted = rule.lower().rpartition(":") if has_port(rule) else (rule.lower(), "", "")
        if wanted and int(wanted) != port or not wanted and port not in WEB_PORTS:
            continue
        name = name.strip("[]").rstrip(".")
        if host == name:
            return rule
        if name.startswith("*.") and host.endswith(name[1:]):
            found = rule
    return found


def addresses(host: str, port: int, wildcard: bool) -> list[tuple[str, int]]:
    """Where to connect for ``host:port``. A name a ``*.domain`` rule let through may only be a public address:
    whoever owns one name under that domain chooses what it resolves to, and the loopback (this machine's own
    services), the LAN or the cloud's metadata service (169.254.169.254, which hands out keys) is not on the
    list. A host named by its own rule goes wherever it resolves. ``PermissionError`` names what was refused."""
    import ipaddress  # here: a listing never starts a proxy

    if not wildcard:
        return [(host.strip("[]"), port)]
    found = [info[4][:2] for info in socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)]
    public = [(str(address), port) for address, _ in found if ipaddress.ip_address(address).is_global]
    if not public:
        raise PermissionError(f"{host} resolves to {', '.join(sorted({str(a) for a, _ in found}))}, which is not "
                              "a public address, and a `*.domain` rule reaches only public ones; list the host "
                              "by its own name or address in the agent block's `network:` if you mean it")
    return public


def has_port(rule: str) -> bool:
    head, sep, tail = rule.rpartition(":")
    return bool(sep) and tail.isdigit() and (not head.count(":") or head.endswith("]"))


def target_of(head: bytes) -> tuple[str, str, int, bytes]:
    """(method, host, port, the head to send on) from a request head; ValueError when it is none of ours."""
    line, _, rest = head.partition(b"\r\n")
    method, url, version = line.decode("latin-1").split(" ")
    if method == "CONNECT":
        host, _, port = url.rpartition(":")
        return method, host, int(port), b""
    if not url.startswith("http://"):
        raise ValueError(url)
    hostport, slash, path = url[len("http://"):].partition("/")
    host, _, port = hostport.rpartition(":") if has_port(hostport) else (hostport, "", "80")
    return method, host, int(port), f"{method} {slash}{path} {version}\r\n".encode("latin-1") + rest


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head and len(head) < HEAD_LIMIT:
            chunk = client.recv(4096)
            if not chunk:
                return
            head += chunk
        try:
            method, host, port, forward = target_of(head)
        except ValueError:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
            return
        rule = rule_for(self.server.rules, host, port)
        if rule is None:
            self.server.denied.append(f"{host}:{port}")
            _refuse(client, f"{host}:{port} is not on this step's network list; add it to the agent block's "
                            "`network:` list in .specd/pipeline.json")
            return
        try:
            upstream = _connect(addresses(host, port, rule.startswith("*.")))
        except PermissionError as exc:
            self.server.denied.append(f"{host}:{port}")
            _refuse(client, str(exc))
            return
        except OSError as exc:
            client.sendall(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}".encode())
            return
        upstream.settimeout(None)
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(forward)
            relay(client, upstream)


def _refuse(client: socket.socket, why: str) -> None:
    body = f"specd: {why}\n".encode()
    client.sendall(b"HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _connect(targets: list[tuple[str, int]]) -> socket.socket:
    """A connection to the first of ``targets`` that answers."""
    error: OSError = OSError("no address")
    for target in targets:
        try:
            return socket.create_connection(target, timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            error = exc
    raise error


def relay(one: socket.socket, other: socket.socket) -> None:
    """Bytes both ways until either side is done."""
    back = threading.Thread(target=pump, args=(other, one), daemon=True)
    back.start()
    pump(one, other)
    back.join()


class _Server(Bounded, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, rules: tuple[str, ...]) -> None:
        self.rules = rules
        self.room = threading.BoundedSemaphore(CONNECTIONS)
        self.denied: list[str] = []
        self.path = Path(path)
        super().__init__(path, _Handler)


_RUNNING: dict[tuple[str, ...], _Server] = {}
_OWNER = [0]  # the pid the proxies belong to: a forked child starts its own
_FOLDER: list[Path] = []


def socket_for(rules: tuple[str, ...]) -> Path:
    """The unix socket of the proxy for ``rules``, started now if this process has none yet."""
    if _OWNER[0] != os.getpid():
        _RUNNING.clear()
        _FOLDER.clear()
        _OWNER[0] = os.getpid()
    key = tuple(sorted(set(rules)))
    server = _RUNNING.get(key)
    if server is None:
        if not _FOLDER:
            _FOLDER.append(Path(tempfile.mkdtemp(prefix="specd-proxy-")))
            atexit.register(shutil.rmtree, _FOLDER[0], True)
        path = _FOLDER[0] / f"{len(_RUNNING)}.sock"
        server = _Server(str(path), key)
        threading.Thread(target=server.serve_forever, name=f"specd-proxy-{len(_RUNNING)}", daemon=True).start()
        _RUNNING[key] = server
    return server.path


def denied(rules: tuple[str, ...]) -> list[str]:
    """What the proxy for ``rules`` refused so far in this process."""
    server = _RUNNING.get(tuple(sorted(set(rules)))) if _OWNER[0] == os.getpid() else None
    return list(server.denied) if server else []
