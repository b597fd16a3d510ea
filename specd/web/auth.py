"""Who may use the dashboard: whoever holds the access token, from this machine's browser, on purpose.

- The token comes once in the printed URL (``?token=``); it is swapped for an HttpOnly, SameSite=Strict cookie
  and the browser is sent to the same address without it, so it does not linger in history or referrers.
- Every request without the cookie (or an ``Authorization: Bearer`` header, for scripts) gets 401, whatever
  the path: an unknown route must not tell a stranger which routes exist.
- A state-changing request is a POST from the dashboard's own origin carrying the CSRF token the page was
  rendered with. The CSRF token is derived from the access token, so nothing is kept per session.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "specd_ui"
CSRF_FIELD = "csrf"
UNSAFE = ("POST", "PUT", "PATCH", "DELETE")
Refuse = Callable[[Request, int, str], Response]  # the page (or JSON) saying why: (request, status, message)


def plain(request: Request, status: int, message: str) -> Response:
    return PlainTextResponse(f"{status}: {message}\n", status_code=status)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(token: str) -> str:
    return hmac.new(token.encode(), b"specd-ui-csrf", hashlib.sha256).hexdigest()[:40]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, token_given: bool, https: bool = False) -> str | None:
    """What `specd ui --host` must say when it listens beyond this machine with a token nobody chose, or in
    plain HTTP, where anyone on the way reads the token."""
    if is_loopback(host) or (token_given and https):
        return None
    if token_given:
        return (f"listening on {host} in plain HTTP: anyone on the network between you and this machine can read "
                "the token and answer your gates; pass --tls-cert and --tls-key, or reach it through a tunnel "
                "(`ssh -L 8765:127.0.0.1:8765 HOST`) with --host 127.0.0.1")
    return (f"listening on {host}, not loopback: anyone who can reach this address and learns the URL can "
            "approve, reject and cancel your tasks and read their transcripts; pass --token with a long random "
            "value" + ("" if https else " and --tls-cert/--tls-key (the token travels in plain HTTP)")
            + ", or keep --host 127.0.0.1")


def same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def cross_site(request: Request) -> bool:
    """A browser says where a request came from; anything but this origin (or a typed address) is refused."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:  # set by the browser itself, never by a page's script: the surest word
        return site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:  # not a browser's cross-origin request (curl, a script); the CSRF token is still needed
        return False
    return urlsplit(origin).netloc != request.headers.get("host", "")  # "null" too: a sandboxed or file page


class Guard:
    """ASGI middleware in front of every route (static assets included: there is no public path)."""

    def __init__(self, app: ASGIApp, token: str, refuse: Refuse = plain) -> None:
        self.app, self.token, self.refuse = app, token, refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = self.check(request)
        if response is None:
            await self.app(scope, receive, send)
        else:
            await response(scope, receive, send)

    def check(self, request: Request) -> Response | None:
        given = request.query_params.get("token")
        if given is not None and same(given, self.token) and request.method == "GET":
            rest = URL(scope=request.scope).remove_query_params("token")
            response = RedirectResponse(rest.path + (f"?{rest.query}" if rest.query else ""), status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/",
                                secure=request.url.scheme == "https")  # over HTTPS, never sent in plain text
            return response
        bearer = request.headers.get("authorization", "")
        held = request.cookies.get(COOKIE) or (bearer[7:] if bearer.lower().startswith("bearer ") else None)
        if not same(held, self.token):
            return self.refuse(request, 401, "open the address `specd ui` printed; it carries the access token")
        if request.method in UNSAFE and cross_site(request):
            return self.refuse(request, 403, "a cross-site request was refused")
        return None
