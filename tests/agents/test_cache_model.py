"""Issue 33, item 5: the fake API's cache bills as the API does, and the anthropic agent's breakpoints
outlive a gate where the mode makes gates.

The fake's rules (tests/fake_cache.py) are checked here first, because every token figure in the benches
and in the cost tests rests on them: a prefix under 1,024 tokens is never cached; an entry lives five
minutes from its last read, or an hour when asked; an hour's write is reported apart, and specd prices
it at 2x input.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_cache import PromptCache

from specd.agents.anthropic import caching
from specd.agents.anthropic.pricing import Price, usage_from


def body(words: int, ttl: str | None = None, tail: str = "question") -> dict[str, Any]:
    mark: dict[str, str] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"model": "m", "system": [{"type": "text", "text": "word " * words, "cache_control": mark}],
            "messages": [{"role": "user", "content": tail}]}


def test_a_prefix_under_the_minimum_is_never_cached() -> None:
    cache = PromptCache()
    small = body(100)  # about 125 tokens
    first, second = cache.account(small), cache.account(small)
    assert first["cache_creation_input_tokens"] == second["cache_creation_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == 0
    assert second["input_tokens"] == first["input_tokens"] > 100


def test_five_minutes_from_the_last_read_then_gone() -> None:
    cache = PromptCache(clock=lambda: 0.0)
    big = body(2000)
    written = cache.account(big)["cache_creation_input_tokens"]
    assert written > 1024
    cache.advance(200)
    assert cache.account(big)["cache_read_input_tokens"] == written
    cache.advance(250)  # 450 s after the write, 250 s after the read that refreshed it
    assert cache.account(big)["cache_read_input_tokens"] == written
    cache.advance(301)
    again = cache.account(big)
    assert again["cache_read_input_tokens"] == 0
    assert again["cache_creation"] == {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0}


def test_an_hour_entry_outlives_a_twenty_minute_gate() -> None:
    cache = PromptCache(clock=lambda: 0.0)
    first = cache.account(body(2000, "1h"))
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] == first["cache_creation_input_tokens"] > 1024
    cache.advance(1200)
    assert cache.account(body(2000, "1h", tail="next"))["cache_read_input_tokens"] == \
        first["cache_creation_input_tokens"]
    cache.advance(3601)
    assert cache.account(body(2000, "1h"))["cache_read_input_tokens"] == 0


def test_claude_codes_billing_line_is_no_part_of_the_prefix() -> None:
    cache = PromptCache()
    for n, suffix in enumerate(("a1f", "9c2")):
        request = body(2000)
        request["system"].insert(0, {"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1.{suffix};"})
        usage = cache.account(request)
        assert (usage["cache_read_input_tokens"] > 0) == (n == 1)


@pytest.mark.parametrize(("mode", "lasting"), [("auto", False), ("semi-auto", True), ("interactive", True)])
def test_the_shared_breakpoints_last_an_hour_where_people_answer_gates(mode: str, lasting: bool) -> None:
    tools = [{"name": "a"}, {"name": "b"}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "task files"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "reading"}]},
                {"role": "user", "content": [{"type": "text", "text": "more"}]}]
    sent_tools, system, sent = caching.request_parts(tools, "system", messages, enabled=True,
                                                     long=caching.lasting(mode))
    shared = {"type": "ephemeral", "ttl": "1h"} if lasting else {"type": "ephemeral"}
    assert sent_tools[-1]["cache_control"] == shared
    assert system[-1]["cache_control"] == shared
    assert sent[0]["content"][0]["cache_control"] == shared
    assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the rolling one: shorter, last
    assert "cache_control" not in messages[0]["content"][0]  # the stored conversation stays plain


def test_an_hours_write_is_priced_at_twice_input() -> None:
    price = Price(3, 15, 3.75, 0.30)
    five = usage_from({"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 1_000_000,
                       "cache_creation": {"ephemeral_5m_input_tokens": 1_000_000, "ephemeral_1h_input_tokens": 0}},
                      price)
    hour = usage_from({"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 1_000_000,
                       "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_000_000}},
                      price)
    assert (five.cost_usd, hour.cost_usd) == (3.75, 6.0)
