"""Turn reported token usage into USD, and know each model's context window.

Prices are USD per million tokens, from the model pages on platform.claude.com
(checked for this release). tests/agents/test_price_table.py compares the table
with a maintained source (the ``genai-prices`` package, a dev dependency never
imported here) and fails when they drift. ``agent.pricing`` in the pipeline file
overrides or extends the table, so a price change never needs a specd release.
Where a price was not confirmed, the higher candidate is used: over-counting
stops a run early at a budget, under-counting lets it overspend.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specd.agents.base import Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_read: float
    # Some models bill a whole call at higher rates once its prompt passes a size.
    long_prompt: tuple[int, Price] | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Price:
        base = float(data["input"])
        return cls(
            base,
            float(data["output"]),
            float(data.get("cache_write", base * 1.25)),
            float(data.get("cache_read", base * 0.1)),
        )


_P = Price
BUILTIN: dict[str, Price] = {
    "claude-fable-5-2": _P(8, 40, 10, 0.20),
    "claude-fable-5-1": _P(10, 50, 12.5, 0.25),
    "claude-fable-5": _P(10, 50, 12.5, 1.0),
    "claude-mythos-5-2": _P(8, 40, 10, 0.20),
    "claude-opus-5-5": _P(4, 20, 5, 0.20),
    "claude-opus-5": _P(5, 25, 6.25, 0.50),
    "claude-opus-4": _P(5, 25, 6.25, 0.50),  # 4.5 to 4.8; the older 4.0/4.1 ids are retired
    "claude-sonnet-5-5": _P(2, 10, 2.5, 0.10),
    "claude-sonnet-5": _P(2, 10, 2.5, 0.20),
    "claude-sonnet-4-5": _P(3, 15, 3.75, 0.30, (200_000, _P(6, 22.5, 7.5, 0.60))),  # its 1M-token context
    "claude-sonnet-4": _P(3, 15, 3.75, 0.30),
    "claude-haiku-5-5": _P(0.10, 0.50, 0.125, 0.01, (100_000, _P(0.50, 2.50, 0.625, 0.05))),
    "claude-haiku-4": _P(1, 5, 1.25, 0.10),
}
# Used when nothing matches: the dearest known price, for the reason in the module docstring.
FALLBACK = BUILTIN["claude-fable-5"]

CONTEXT_WINDOWS: dict[str, int] = {
    "claude-haiku-4": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-opus-4-5": 200_000,
}
DEFAULT_WINDOW = 1_000_000  # every 5.x model and the later 4.x ones


def _lookup(model: str, table: Mapping[str, Any]) -> Any | None:
    if model in table:
        return table[model]
    bare = re.sub(r"-\d{8}$", "", model)  # dated snapshot ids share their alias's price
    if bare in table:
        return table[bare]
    # Longest prefix on a "-" boundary, so claude-opus-5-5 never takes claude-opus-5's price.
    matches = [key for key in table if bare == key or bare.startswith(key + "-")]
    return table[max(matches, key=len)] if matches else None


def price_for(model: str, overrides: Mapping[str, Any] | None = None) -> tuple[Price, bool]:
    """The price of ``model`` and whether it was known (False means the fallback)."""
    if overrides:
        found = _lookup(model, overrides)
        if found is not None:
            return Price.from_mapping(found), True
    known = _lookup(model, BUILTIN)
    return (known, True) if known is not None else (FALLBACK, False)


def context_window(model: str, override: int | None = None) -> int:
    if override:
        return int(override)
    found = _lookup(model, CONTEXT_WINDOWS)
    return int(found) if found is not None else DEFAULT_WINDOW


def usage_from(reported: Any, price: Price) -> Usage:
    """A ``Usage`` (with cost) from the SDK's usage object or a plain dict."""

    def field(name: str) -> int:
        value = reported.get(name) if isinstance(reported, Mapping) else getattr(reported, name, None)
        return int(value or 0)

    inp, out = field("input_tokens"), field("output_tokens")
    write, read = field("cache_creation_input_tokens"), field("cache_read_input_tokens")
    if price.long_prompt is not None and inp + write + read > price.long_prompt[0]:
        price = price.long_prompt[1]
    hour = min(write, _hour_writes(reported))  # an hour's cache write costs 2x input, five minutes' cache_write
    cost = (inp * price.input + out * price.output + (write - hour) * price.cache_write + hour * 2 * price.input
            + read * price.cache_read) / 1e6
    return Usage(inp, out, write, read, round(cost, 6))


def _hour_writes(reported: Any) -> int:
    """The tokens of this call's cache writes that asked for an hour (the API reports them apart)."""
    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

    return int(get(get(reported, "cache_creation"), "ephemeral_1h_input_tokens") or 0)


CHARS_PER_TOKEN = 3  # a floor: English text and JSON run nearer 4, so this over-counts, which is the safe side


def estimate_input(params: Mapping[str, Any], price: Price) -> Usage:
    """An upper estimate of a call's prompt (system, tools, messages) before it is sent.

    Priced as uncached input: a cache hit would cost less, never more. The reply's output tokens
    are not guessed; they are counted after the call like everything else.
    """
    sent = {key: params.get(key) for key in ("system", "tools", "messages")}
    tokens = len(json.dumps(sent, ensure_ascii=False, default=str)) // CHARS_PER_TOKEN + 1
    if price.long_prompt is not None and tokens > price.long_prompt[0]:
        price = price.long_prompt[1]
    return Usage(input_tokens=tokens, cost_usd=tokens * price.input / 1e6)
