"""Remove secrets from text before it is written anywhere durable or shown.

``redact`` is THE redaction point: the atomic writer, the journal, transcripts,
CHANGELOG entries, commit messages, error messages and the console all pass
through it. The filter is deliberately greedy: a false positive costs a few
unreadable characters in a log, a false negative leaks a key into a folder
people commit and share. Standard library only, because core modules import it.

What is masked: the values of secret-named environment variables (and of any
variable holding a URL with a password), the values ``add_secrets`` was given
(a project's ``.env*`` and credential files at any depth, see ``specd.tasks.secrets``),
each also base64-encoded or in hex (``specd.disguises``), and the token shapes in
``specd.redact_rules``. The token patterns never match a quote or a backslash, so
redacting the text of a JSON document keeps it valid JSON.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from specd.disguises import encoded_forms
from specd.redact_rules import RULE_HINTS, URL_CREDENTIALS, URL_QUERY_CREDENTIALS, holds_token, may_hold
from specd.redact_rules import RULES as _RULES
from specd.system.lazyre import lazy

MASK = "[REDACTED]"

# Environment variable names whose values are secrets, matched anywhere in the name.
# AUTH is not matched inside AUTHOR: GIT_AUTHOR_NAME is an identity, not a credential.
# _PAT and _PWD only as a whole part after an underscore: PATH, PWD and OLDPWD are not secrets.
SECRET_NAME = lazy(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK|DSN|PRIVATE|AUTH(?!OR)|COOKIE|JWT|DATABASE_URL"
    r"|_(?:PAT|PWD)(?:_|$)", re.IGNORECASE
)
# Short values ("1", "true", a port) would mask ordinary words, so only long ones count.
_MIN_SECRET_LEN = 8
# No rule matches fewer characters than this ("pwd=x"), and env secrets are at least _MIN_SECRET_LEN.
_SHORTEST = 5


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


@functools.lru_cache(maxsize=4096)  # every git, jail and hook process scrubs the same environment again
def is_secret_var(name: str, value: str) -> bool:
    """A secret-named variable, one whose value is a URL with a password (REDIS_URL=redis://:pw@host) or a credential
    in its query (SPECD_SERVER=http://host/?token=...), or one whose value holds a token's shape, whatever its name
    (DEPLOY_HELPER=ghp_...): a jailed agent never gets it."""
    return (is_secret_name(name) or ("://" in value and (URL_CREDENTIALS.search(value) is not None
                                                         or URL_QUERY_CREDENTIALS.search(value) is not None))
            or holds_token(value))


def add_secrets(values: Iterable[str]) -> None:
    """Mask these values too from now on (a project's .env values); short ones are ignored like env ones."""
    global _cache
    new = {v for value in values if isinstance(value, str) for v in secret_parts(value)} - _extra
    if new:
        _extra.update(new)
        _cache = (_STALE, ())


def added_secrets() -> frozenset[str]:
    """The values ``add_secrets`` was given so far: a memo of redacted text must be keyed by them too."""
    return frozenset(_extra)


def secret_parts(value: str) -> list[str]:
    """The parts of a secret value worth masking: the whole, and a URL's password alone (it may be printed
    outside the URL); none shorter than 8 characters."""
    parts = [value, *(m.group(2) for m in URL_CREDENTIALS.finditer(value))] if "://" in value else [value]
    return [part for part in parts if len(part) >= _MIN_SECRET_LEN]


def _env_secrets() -> tuple[str, ...]:
    # Read at call time: keys may be set after import (tests, dotenv loaders). Worked out again only when the
    # environment changed: on POSIX os.environ keeps its raw bytes in _data, which compares at C speed.
    global _cache
    raw = getattr(os.environ, "_data", None)
    # A dict compares with another at C speed without building anything; the copy kept is what it was then.
    if not isinstance(raw, dict) or raw != _cache[0]:
        key = dict(raw) if isinstance(raw, dict) else None
        values = {part for name, value in os.environ.items() if is_secret_var(name, value)
                  for part in secret_parts(value)} | _extra
        values |= {form for value in values for form in encoded_forms(value)}  # a manifest's base64, a hex dump
        # Longest first so a secret that contains another is masked whole.
        _cache = (key, tuple(sorted(values, key=len, reverse=True)))
    return _cache[1]


_STALE = object()  # a cache key no environment equals: the next call works the secrets out again
_cache: tuple[Any, tuple[str, ...]] = (None, ())
_extra: set[str] = set()


def _mask(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.re.groups else ""
    return f"{prefix}{MASK}"


def secrets_in_force() -> tuple[str, ...]:
    """The secret values redaction masks now: what a memo of redacted values must be keyed by."""
    return _env_secrets()


def redact(text: str) -> str:
    """Return ``text`` with secret env values and known token shapes masked."""
    if not text:
        return text
    return _redact_with(text, _env_secrets())


def redact_obj(obj: Any) -> Any:
    """Deep copy of ``obj`` with every string (keys and values) redacted.

    A mapping entry whose key names a secret (``x-api-key``, ``authorization``,
    ``*_token``) has its whole value masked, whatever the value looks like.
    """
    return _walk(obj, _env_secrets())


def scrubbed_env(environ: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """The environment without secret-named variables, except those named in ``allow``.

    For commands the agent runs: what they print goes back to the model.
    """
    source = os.environ if environ is None else environ
    keep = set(allow)
    return {name: value for name, value in source.items() if name in keep or not is_secret_var(name, value)}


def _redact_with(text: str, secrets: tuple[str, ...]) -> str:
    if len(text) < _SHORTEST:
        return text
    if len(text) <= _MEMO_LEN:  # names, timestamps, summaries: the same few strings pass by on every save
        return _redact_short(text, secrets)
    return _redact_long(text, secrets)


_MEMO_LEN = 256


@functools.lru_cache(maxsize=8192)
def _redact_short(text: str, secrets: tuple[str, ...]) -> str:
    return _redact_long(text, secrets)


def _redact_long(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    lowered = text.lower()
    if not may_hold(lowered, RULE_HINTS):
        return text
    for hints, pattern in _RULES:
        if any(hint in lowered for hint in hints):
            text = pattern.sub(_mask, text)
    return text


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in {"x-api-key", "authorization", "api_key", "api-key"} or bool(
        re.search(r"(token|secret|password|passwd|pwd)$", lowered)
    )


def _walk(obj: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(obj, str):
        return _redact_with(obj, secrets)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            new_key = _redact_with(key, secrets) if isinstance(key, str) else key
            if isinstance(key, str) and _secret_key(key) and isinstance(value, str) and value:
                out[new_key] = MASK
            else:
                out[new_key] = _walk(value, secrets)
        return out
    if isinstance(obj, list | tuple):
        items = [_walk(item, secrets) for item in obj]
        return items if isinstance(obj, list) else tuple(items)
    return obj
