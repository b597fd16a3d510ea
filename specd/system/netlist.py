"""The network of a jail as a list: which hosts it reaches, and the wiring that makes specd's proxy its way out.

A jail with its own network namespace sees only a loopback of its own. specd binds its proxy's socket and
``specd.system.bridge`` into it and runs the command under the bridge, which serves ``HTTPS_PROXY`` inside
and tunnels each listed loopback service (a local API server) on its own port.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from specd.system import proxy
from specd.system.proxy import has_port

BRIDGE = Path(__file__).with_name("bridge.py")
INSIDE = Path("/run/specd")  # where the proxy's socket and the bridge show inside the jail
PROXY_PORT = 3128
PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
              "no_proxy")
LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]")
# Claude Code with no ANTHROPIC_BASE_URL: its API, and where a `claude login` account signs in and refreshes.
ANTHROPIC_HOSTS = ("api.anthropic.com", "console.anthropic.com", "platform.claude.com", "claude.ai")
# The Gemini CLI with no GOOGLE_GEMINI_BASE_URL: the Gemini API, and where a Google login signs in and calls.
GEMINI_HOSTS = ("generativelanguage.googleapis.com", "oauth2.googleapis.com", "cloudcode-pa.googleapis.com")
# backend -> (the variable that moves its API elsewhere, its hosts when it is unset)
API_HOSTS = {"claude_code": ("ANTHROPIC_BASE_URL", ANTHROPIC_HOSTS), "gemini": ("GOOGLE_GEMINI_BASE_URL", GEMINI_HOSTS)}


def api_hosts(tier: str, backend: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The hosts a backend needs to work at all: its API (``ANTHROPIC_BASE_URL``'s or
    ``GOOGLE_GEMINI_BASE_URL``'s host, or the vendor's API and sign-in hosts)."""
    if tier != "agent" or backend not in API_HOSTS:
        return ()
    variable, hosts = API_HOSTS[backend]
    base = env.get(variable)
    if not base:
        return hosts
    url = urlsplit(base)
    port = url.port or (443 if url.scheme == "https" else 80)
    host = url.hostname or ""
    return (f"[{host}]:{port}" if ":" in host else f"{host}:{port}",)


def through_proxy(rules: tuple[str, ...], args: list[str], env: dict[str, str], inner: list[str]) -> list[str]:
    """Binds specd's proxy and the bridge into the jail, points the proxy variables at it, and wraps the command."""
    sock = proxy.socket_for(rules)
    tunnels = [rule for rule in rules if has_port(rule) and rule.rpartition(":")[0] in LOOPBACK]
    taken = {int(rule.rpartition(":")[2]) for rule in tunnels}
    port = next(p for p in range(PROXY_PORT, PROXY_PORT + 100) if p not in taken)
    args += ["--bind", str(sock), str(INSIDE / "proxy.sock"), "--ro-bind", str(BRIDGE), str(INSIDE / "bridge.py")]
    url = f"http://127.0.0.1:{port}"
    env.update({"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url,
                "NO_PROXY": ",".join(LOOPBACK[:3]), "no_proxy": ",".join(LOOPBACK[:3])})
    return [sys.executable, "-I", "-S", str(INSIDE / "bridge.py"), str(INSIDE / "proxy.sock"), str(port),
            *[rule.replace("localhost:", "127.0.0.1:") for rule in tunnels], "--", *inner]
