"""Remove secrets from text before it is written anywhere durable.

Transcripts, the journal and logs all pass through here. The filter is
deliberately greedy: a false positive costs a few unreadable characters in a
log, a false negative leaks a key into a folder people commit and share.
Standard library only, because core modules import it.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "[REDACTED]"

# Names of environment variables whose values are treated as secrets.
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY)", re.IGNORECASE)
# Short values ("1", "true", a port) would mask ordinary words, so only long ones count.
_MIN_SECRET_LEN = 8

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Anthropic keys first: they also match the generic sk- rule, but this one
    # covers the dashes and underscores inside them in one go.
    re.compile(r"sk-ant-[A-Za-z0-9_\-]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=\-]+"),
    re.compile(r"(?i)(x-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"),
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer\b)[^\s\"',}][^\"'\n,}]*"),
)


def _env_secrets() -> list[str]:
    # Read at call time: keys may be set after import (tests, dotenv loaders).
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN
    }
    # Longest first so a secret that contains another is masked whole.
    return sorted(values, key=len, reverse=True)


def _mask(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.re.groups else ""
    return f"{prefix}{MASK}"


def redact(text: str) -> str:
    """Return ``text`` with API keys, bearer tokens and secret env values masked."""
    if not text:
        return text
    return _redact_with(text, _env_secrets())


def redact_obj(obj: Any) -> Any:
    """Deep copy of ``obj`` with every string (keys and values) redacted.

    A mapping entry whose key names a secret (``x-api-key``, ``authorization``,
    ``*_token``) has its whole value masked, whatever the value looks like.
    """
    secrets = _env_secrets()
    return _walk(obj, secrets)


def _redact_with(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(_mask, text)
    return text


def _secret_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in {"x-api-key", "authorization", "api_key", "api-key"} or bool(
        re.search(r"(token|secret|password)$", lowered)
    )


def _walk(obj: Any, secrets: list[str]) -> Any:
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
