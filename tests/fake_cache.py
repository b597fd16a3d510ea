"""The fake Messages API's prompt cache, billed the way the API documents it.

- A request's prefix (tools, then system, then message blocks) is hashed at every block; ``cache_control``
  marks breakpoints. A breakpoint finds an earlier entry by looking back up to ``LOOKBACK`` blocks; the
  longest live one is a cache read, what follows it up to the last breakpoint is a cache write, and what
  follows the last breakpoint is plain input.
- A prefix shorter than the model's minimum (1,024 tokens) is never cached: its breakpoint writes nothing.
- An entry lives 5 minutes, or an hour when its breakpoint asks for ``"ttl": "1h"``; each read refreshes it.
  Writes are reported per lifetime (``cache_creation.ephemeral_5m_input_tokens`` / ``..._1h_...``), as the
  API does, because an hour's write costs 2x input and five minutes' 1.25x.
- The clock is the test's: ``advance(1200)`` is a gate answered 20 minutes later, without waiting for it.
- Claude Code opens its system prompt with an ``x-anthropic-billing-header`` line whose suffix changes with
  every request. It is attribution read by the API, not prompt text, so it is no part of the cached prefix
  here (were it, no Claude Code request could ever read the cache, which is not what Claude Code is
  billed).

Tokens are counted by ``fake_tokens.tokens``: each part as the JSON it is sent as, weighed piece by piece
to stay within 10 % of Anthropic's published tokenizer (``@anthropic-ai/tokenizer``) on the built-in
workflows; the tokenizer of current models is not published. ``log`` keeps, per request, what was read,
written and how many tokens the tool list alone holds, so a test can ask whether a request read its tool
list from the cache.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_tokens import tokens

LOOKBACK = 20  # the API looks this many blocks back from a breakpoint for an earlier cache entry
MIN_TOKENS = 1024  # the smallest prefix the API caches (Sonnet and Opus; the fake uses it for every model)
LIFETIMES = {"5m": 300.0, "1h": 3600.0}
BILLING = "x-anthropic-billing-header:"


@dataclass(frozen=True)
class Segment:
    canon: str
    tokens: int
    ttl: str | None  # the breakpoint's lifetime ("5m" / "1h"), None where the block is no breakpoint
    tool: bool


def segments(body: dict[str, Any]) -> list[Segment]:
    """A request in cache-prefix order: tools, system (less the billing line), then every message block."""
    raw: list[tuple[dict[str, Any], bool]] = [(t, True) for t in body.get("tools") or []]
    system = body.get("system") or []
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    raw += [(b, False) for b in blocks if not str(b.get("text", "")).startswith(BILLING)]
    for msg in body.get("messages", []):
        content = msg["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        raw += [({"role": msg["role"], **block}, False) for block in parts]
    out = []
    for block, is_tool in raw:
        bare = {k: v for k, v in block.items() if k != "cache_control"}
        marker = block.get("cache_control")
        ttl = str(marker.get("ttl") or "5m") if isinstance(marker, dict) else None
        out.append(Segment(json.dumps(bare, sort_keys=True), tokens(bare), ttl, is_tool))
    return out


class PromptCache:
    def __init__(self, minimum: int = MIN_TOKENS, clock: Callable[[], float] = time.monotonic) -> None:
        self.minimum = minimum
        self.clock = clock
        self.offset = 0.0
        self.entries: dict[str, tuple[float, float]] = {}  # prefix hash -> (expires at, lifetime)
        self.log: list[dict[str, int]] = []

    def now(self) -> float:
        return self.clock() + self.offset

    def advance(self, seconds: float) -> None:
        """Move the cache's clock on: entries whose lifetime has passed are gone at the next request."""
        self.offset += seconds

    def account(self, body: dict[str, Any]) -> dict[str, Any]:
        parts = segments(body)
        now = self.now()
        self.entries = {h: e for h, e in self.entries.items() if e[0] > now}
        hashes, h = [], hashlib.sha256(str(body.get("model")).encode()).hexdigest()
        for part in parts:
            h = hashlib.sha256((h + part.canon).encode()).hexdigest()
            hashes.append(h)
        counts = [p.tokens for p in parts]
        prefix = [sum(counts[: i + 1]) for i in range(len(counts))]
        marks = [i for i, p in enumerate(parts) if p.ttl is not None]
        hits = [j for b in marks for j in range(max(0, b - LOOKBACK), b + 1) if hashes[j] in self.entries]
        read_end = max(hits, default=-1)
        if read_end >= 0:  # a read refreshes the entry it read
            life = self.entries[hashes[read_end]][1]
            self.entries[hashes[read_end]] = (now + life, life)
        cached = [b for b in marks if prefix[b] >= self.minimum]
        written = {"5m": 0, "1h": 0}
        start = read_end + 1
        for b in cached:
            ttl = str(parts[b].ttl)
            life = LIFETIMES.get(ttl, LIFETIMES["5m"])
            self.entries[hashes[b]] = (now + life, life)
            if b >= start:
                written[ttl if ttl in written else "5m"] += sum(counts[start : b + 1])
                start = b + 1
        end = max(read_end, cached[-1] if cached else -1)
        read = prefix[read_end] if read_end >= 0 else 0
        tool_tokens = sum(p.tokens for p in parts if p.tool)
        self.log.append({"read": read, "written": sum(written.values()), "tools": tool_tokens,
                         "total": prefix[-1] if prefix else 0})
        return {
            "input_tokens": sum(counts[end + 1 :]),
            "cache_creation_input_tokens": sum(written.values()),
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": written["5m"],
                               "ephemeral_1h_input_tokens": written["1h"]},
        }
