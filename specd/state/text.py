"""Lone surrogates: text no file or terminal can hold, kept out of everything specd reads and writes.

JSON may escape half of a surrogate pair (``"\\ud800"``): ``json.loads`` then gives a str that cannot
be encoded as UTF-8, so writing it to the run state or printing it ends in a UnicodeEncodeError. An
agent's result file, a model's reply or a hand-edited state can hold one. Each is replaced with U+FFFD
(the replacement character) when read, and again before any write, so one bad character costs one
character, not the run.
"""

from __future__ import annotations

from typing import Any

from specd.system.lazyre import lazy

_LONE = lazy("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def escaped(raw: str) -> bool:
    """Whether JSON text may hold an escaped surrogate (cheap: scrubbing is skipped for almost every file)."""
    return "\\ud" in raw or "\\uD" in raw


def clean(text: str) -> str:
    return _LONE.sub(REPLACEMENT, text) if _LONE.search(text) else text


def scrub(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate in its strings and keys replaced."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(item) for item in value]
    return value
