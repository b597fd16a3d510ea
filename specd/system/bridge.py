"""Runs first inside a jail with its own network: the one way out is specd's proxy, through a unix socket.

    python -I -S bridge.py SOCKET PROXY_PORT [HOST:PORT ...] -- COMMAND...

It listens on ``127.0.0.1:PROXY_PORT`` (what ``HTTPS_PROXY`` names inside) and hands each connection to
the socket as it is. Each ``HOST:PORT`` is a loopback service of the host on the list (a local API server):
it listens on the same port inside and tunnels every connection there with a ``CONNECT``, so a client
that bypasses proxies for loopback still gets through, and only there. Then it runs COMMAND, passes it the
signals it gets, and exits with its status.

Standard library only, and no import of specd: the jail shows this one file, not specd's package.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    for sock in (dst, src):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def join(client: socket.socket, path: str, tunnel: str) -> None:
    with client, socket.socket(socket.AF_UNIX) as upstream:
        try:
            upstream.connect(path)
            if tunnel:
                upstream.sendall(f"CONNECT {tunnel} HTTP/1.1\r\nHost: {tunnel}\r\n\r\n".encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = upstream.recv(1)
                    if not chunk:
                        return
                    head += chunk
                if b" 200 " not in head.split(b"\r\n", 1)[0] + b" ":
                    return
        except OSError:
            return
        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join()


def listen(port: int, path: str, tunnel: str) -> None:
    server = socket.socket(socket.AF_INET)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)

    def accept() -> None:
        while True:
            client, _ = server.accept()
            threading.Thread(target=join, args=(client, path, tunnel), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main(argv: list[str]) -> int:
    split = argv.index("--")
    path, port, tunnels, command = argv[0], int(argv[1]), argv[2:split], argv[split + 1:]
    listen(port, path, "")
    for target in tunnels:
        listen(int(target.rpartition(":")[2]), path, target)
    child = subprocess.Popen(command)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: child.send_signal(number))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
