"""Remove secrets from text before it is written anywhere durable or shown.

``redact`` is THE redaction point: the atomic writer, the journal, transcripts,
CHANGELOG entries, commit messages, error messages and the console all pass
through it. The filter is deliberately greedy: a false positive costs a few
unreadable characters in a log, a false negative leaks a key into a folder
people commit and share. Standard library only, because core modules import it.

The token patterns never match a quote or a backslash, so redacting the text
of a JSON document keeps it valid JSON.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "[REDACTED]"

# Environment variable names whose values are secrets, matched anywhere in the name.
# AUTH is not matched inside AUTHOR: GIT_AUTHOR_NAME is an identity, not a credential.
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK|DSN|PRIVATE|AUTH(?!OR)|COOKIE", re.IGNORECASE
)
# Short values ("1", "true", a port) would mask ordinary words, so only long ones count.
_MIN_SECRET_LEN = 8
_PEM = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"

# Each shape with the literal text every match of it contains (lower-cased): a rule runs only on text that
# holds one of its hints, since most text holds none and a substring test costs far less than a regex scan.
_RULES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # A whole PEM block; an unterminated one (a torn log) is masked as far as its base64 runs.
    # The body may hold JSON-escaped newlines (\n) but never a quote, so JSON stays valid.
    (("private key",), re.compile(_PEM + r"""[^"]*?-----END[A-Z0-9 ]*PRIVATE KEY-----""")),
    (("private key",), re.compile(_PEM + r"(?:[A-Za-z0-9+/=\s]|\\[nr])*")),
    # Anthropic keys first: they also match the generic sk- rule, but this one
    # covers the dashes and underscores inside them in one go.
    (("sk-ant-",), re.compile(r"sk-ant-[A-Za-z0-9_\-]+")),
    (("sk-",), re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}")),
    (("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    (("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    (("xox",), re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}")),
    (("hooks.slack.com/services/",), re.compile(r"(hooks\.slack\.com/services/)[A-Za-z0-9_/\-]+")),
    (("bearer",), re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=\-]+")),
    (("x-api-key",), re.compile(r"(?i)(x-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"'\\,}]+")),
    (("authorization",),
     re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer\b)[^\s\"'\\,}][^\"'\\\n,}]*")),
)
_PATTERNS = tuple(pattern for _, pattern in _RULES)
# No rule matches fewer characters than this ("bearer x"), and env secrets are at least _MIN_SECRET_LEN.
_SHORTEST = 8


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def _env_secrets() -> tuple[str, ...]:
    # Read at call time: keys may be set after import (tests, dotenv loaders). Worked out again only when the
    # environment changed: on POSIX os.environ keeps its raw bytes in _data, which compares at C speed.
    global _cache
    raw = getattr(os.environ, "_data", None)
    key = tuple(raw.items()) if isinstance(raw, dict) else None
    if key is None or key != _cache[0]:
        values = {value for name, value in os.environ.items()
                  if is_secret_name(name) and len(value) >= _MIN_SECRET_LEN}
        # Longest first so a secret that contains another is masked whole.
        _cache = (key, tuple(sorted(values, key=len, reverse=True)))
    return _cache[1]


_cache: tuple[Any, tuple[str, ...]] = (None, ())


def _mask(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.re.groups else ""
    return f"{prefix}{MASK}"


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
    return {name: value for name, value in source.items() if name in keep or not is_secret_name(name)}


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
    for hints, pattern in _RULES:
        if any(hint in lowered for hint in hints):
            text = pattern.sub(_mask, text)
    return text


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in {"x-api-key", "authorization", "api_key", "api-key"} or bool(
        re.search(r"(token|secret|password)$", lowered)
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
