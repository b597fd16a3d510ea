"""A ``claude login`` kept out of the jail: the task's copy of it holds stand-ins, and the key guard the token.

A `claude login` (a Pro, Max or Team plan, or a console account) keeps an access token and a refresh token in
``.credentials.json``, and a console account an API key in ``.claude.json`` (``primaryApiKey``). specd seeds
each task's own config folder with them (``system/agent_state.py``), and that folder is in the jail, so
`cat $CLAUDE_CONFIG_DIR/.credentials.json` gave the model a refresh token: the account, for good.

So before each run of a jailed Claude Code, the copy's tokens become stand-ins, with an expiry so far away that
Claude Code never refreshes in the jail, and its base URL names the key guard (``system/keyguard.py``). At each
request the guard puts in the access token the user's own login holds at that moment: when the user's own
`claude` refreshes it, the next request carries the new one, and the login's refresh token, which rotates, is
used by the user's `claude` alone. A token past its expiry is not sent: the guard answers 401 with the fix.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specd.system import keyguard
from specd.system.ownfiles import open_own, read_regular

CREDENTIALS = ".credentials.json"
FAR_AWAY_MS = 4102444800000  # 2100-01-01: Claude Code refreshes a token only when it is near its expiry
DEFAULT_API = "https://api.anthropic.com"
# The copy's scopes, as a `claude setup-token` token has them: Claude Code then makes no call of the profile's or
# claude.ai's (to api.anthropic.com itself, past the guard, whose stand-in would get a 401), only the messages.
INFERENCE_ONLY = ["user:inference"]


def user_files(env: Mapping[str, str]) -> tuple[Path, Path]:
    """The user's own ``.credentials.json`` and ``.claude.json``, where Claude Code keeps them on Linux."""
    home = Path(env.get("HOME") or os.environ.get("HOME") or "~").expanduser()
    if env.get("CLAUDE_CONFIG_DIR"):
        config = Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
        return config / CREDENTIALS, config / ".claude.json"
    return home / ".claude" / CREDENTIALS, home / ".claude.json"


def _json(path: Path, *, own: bool = False) -> dict[str, Any]:
    """``own``: a file of the task's copy, which the agent may have made a link or a FIFO (never followed)."""
    try:
        data = json.loads(read_regular(path, 1 << 20) if own else path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def login(path: Path) -> dict[str, Any]:
    """The ``claudeAiOauth`` entry of a credentials file; empty when there is none, or no access token in it."""
    entry = _json(path).get("claudeAiOauth")
    return entry if isinstance(entry, dict) and isinstance(entry.get("accessToken"), str) else {}


def expired(entry: Mapping[str, Any], now: float | None = None) -> bool:
    at = entry.get("expiresAt")
    return isinstance(at, (int, float)) and at / 1000 <= (time.time() if now is None else now)


def access_token(path: Path) -> str:
    """The access token of the user's login as it is now; :class:`keyguard.Refused` when it is gone or expired."""
    entry = login(path)
    for _ in range(5):  # the user's own `claude` may be rewriting it at this very moment: read it again
        if entry:
            break
        time.sleep(0.1)
        entry = login(path)
    again = "sign in again outside specd (`claude auth login`), then `specd continue TASK`"
    if not entry:
        raise keyguard.Refused("specd's key guard: your claude login is gone", f"{again} (the login file: {path})")
    if expired(entry):
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["expiresAt"] / 1000))
        raise keyguard.Refused(f"specd's key guard: your claude login expired at {at}",
                               f"{again} (the login file: {path})")
    return str(entry["accessToken"])


def shield(env: Mapping[str, str], child: dict[str, str]) -> list[str]:
    """The tokens of the task's copy of a ``claude login`` as stand-ins, the real ones with the guard; returns
    the guard's rules for the jail's network list, none when the user has no login to keep out."""
    folder = child.get("CLAUDE_CONFIG_DIR")
    if not folder or not Path(folder).is_dir():
        return []
    mine, account = user_files(env)
    upstream = env.get("ANTHROPIC_BASE_URL") or DEFAULT_API
    rules = []
    entry = login(mine)
    made = keyguard.guarded_by("anthropic", upstream, str(mine), lambda: access_token(mine)) if entry else None
    if made is not None:
        child["ANTHROPIC_BASE_URL"], fake, rule = made
        rules.append(rule)
        copy = {**entry, "accessToken": fake, "refreshToken": "specd-stand-in-" + secrets.token_hex(24),
                "expiresAt": FAR_AWAY_MS}
        if "user:inference" in (entry.get("scopes") or ()):  # a console login's (no inference) is left as it is
            copy["scopes"] = INFERENCE_ONLY
        _write(Path(folder) / CREDENTIALS, {**_json(Path(folder) / CREDENTIALS, own=True), "claudeAiOauth": copy})
    else:  # a copy seeded before the user signed out (or moved the login): its real tokens go, nothing stands in
        held = _json(Path(folder) / CREDENTIALS, own=True)
        stale = held.get("claudeAiOauth")
        if isinstance(stale, dict) and not str(stale.get("accessToken", "specd-")).startswith("specd-"):
            _write(Path(folder) / CREDENTIALS, {k: v for k, v in held.items() if k != "claudeAiOauth"})
    key = _json(account).get("primaryApiKey")
    if isinstance(key, str) and key and (made := keyguard.guarded("anthropic", upstream, key)) is not None:
        child["ANTHROPIC_BASE_URL"], fake, rule = made
        rules.append(rule)
        _write(Path(folder) / ".claude.json", {**_json(Path(folder) / ".claude.json", own=True), "primaryApiKey": fake})
    return rules


def _write(path: Path, data: dict[str, Any]) -> None:
    """Over whatever the agent left there, a link included (replaced, never followed)."""
    fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
