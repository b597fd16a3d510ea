"""`specd approve|reject|skip TASK --server URL`: answer through a project's control plane from another clone.

URL is the address `specd ui` (or `specd serve`) printed, token included; `SPECD_SERVER` holds it for a shell.
The answer is recorded by the server as from a clone, by this clone's git identity, and the control plane
runs the task at once. Every failure is bad input with its fix: the server is somewhere else, so nothing
here can repair it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from specd.errors import UsageError
from specd.git.identity import who

TIMEOUT = 30.0  # seconds: an answer is recorded in well under one; a server this slow is not answering
ASK = "the address `specd ui` printed in the project's clone (http://HOST:PORT/?token=...)"


def split(url: str) -> tuple[str, str]:
    """The server's base address and the token, from the printed URL; refused with the fix otherwise."""
    parts = urlsplit(url.strip())
    token = (parse_qs(parts.query).get("token") or [""])[0]
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--server {url!r} is not an http:// address", fix=f"pass {ASK}")
    if not token:
        raise UsageError(f"--server {url!r} carries no token (?token=...)", fix=f"pass the whole of {ASK}")
    return f"{parts.scheme}://{parts.netloc}", token


def answer(url: str, task: str, verb: str, note: str, here: Path) -> tuple[str, str]:
    """Send the answer; returns what the server said was done and what happens next."""
    base, token = split(url)
    body = json.dumps({"note": note, "by": who(here)}).encode()
    request = urllib.request.Request(f"{base}/api/tasks/{quote(task, safe='')}/{verb}", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:  # noqa: S310 (the scheme is checked above)
            data = _json(reply.read())
    except urllib.error.HTTPError as exc:
        raise _refused(exc, base, task, verb) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if "CERTIFICATE_VERIFY_FAILED" in str(reason):  # `specd serve --tls-cert` with a certificate of its own
            raise UsageError(f"the control plane at {base} showed a certificate this machine does not trust: {reason}",
                             fix="trust it for this command: `SSL_CERT_FILE=/path/to/its-cert.pem specd ...`, or "
                                 "serve a certificate from an authority this machine trusts") from None
        tls = " (an https:// one when it was started with --tls-cert)" if base.startswith("http://") else ""
        raise UsageError(f"cannot reach the control plane at {base}: {reason}",
                         fix="is `specd ui` (or `specd serve`) running there, on an address this machine can "
                             f"reach{tls}? Start it, or pass {ASK}") from None
    return str(data.get("said") or "recorded"), str(data.get("next") or f"specd status {task} (in that clone)")


def _refused(exc: urllib.error.HTTPError, base: str, task: str, verb: str) -> UsageError:
    data = _json(exc.read())
    found = data.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    if exc.code == 401:
        return UsageError(f"the control plane at {base} refused the token in --server",
                          fix=f"copy the address again: each `specd ui` start makes a new token; pass {ASK}")
    if exc.code == 404:
        return UsageError(f"the project served at {base} has no task {task!r}",
                          fix="check the name with `specd status` in that project's clone")
    if error.get("message"):
        return UsageError(f"{verb} refused by the control plane at {base}: {error['message']}",
                          fix=str(error.get("fix") or f"see `specd status {task}` in that project's clone"))
    return UsageError(f"the control plane at {base} answered HTTP {exc.code} to {verb}",
                      fix=f"pass {ASK}; is it a `specd ui` of this version?")


def _json(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
