"""specd's price table (specd/agents/anthropic/pricing.py) against a maintained source: ``genai-prices``.

The table is kept by hand, so this test is what notices when it drifts: for every Anthropic model the
maintained data knows and specd prices, the same usage must cost the same, including the long-prompt
rates. ``genai-prices`` is a dev dependency only; specd never imports it at run time.
"""

from __future__ import annotations

import os
from decimal import Decimal

import pytest

from specd.agents.anthropic import pricing

genai_prices = pytest.importorskip("genai_prices") if not os.environ.get("CI") else __import__("genai_prices")

# Retired models that a specd prefix still matches; specd prices only the current members of a family.
RETIRED = {"claude-opus-4-0", "claude-opus-4-1"}
# (input incl. cache, cache write, cache read, output): plain, each kind alone, and a prompt past every
# long-prompt threshold the table has.
USAGES = [(1_000, 0, 0, 0), (1_000_000, 0, 0, 0), (1_000, 0, 0, 1_000_000), (1_000_000, 1_000_000, 0, 0),
          (1_000_000, 0, 1_000_000, 0), (90_000, 0, 0, 10_000), (250_000, 20_000, 30_000, 4_000)]


def source_models() -> list[str]:
    anthropic = next(p for p in genai_prices.data_snapshot.get_snapshot().providers if p.id == "anthropic")
    return [m.id for m in anthropic.models]


def source_cost(model: str, total_in: int, write: int, read: int, out: int) -> Decimal:
    usage = genai_prices.Usage(input_tokens=total_in, cache_write_tokens=write, cache_read_tokens=read,
                               output_tokens=out)
    return genai_prices.calc_price(usage, model, provider_id="anthropic").total_price


def specd_cost(model: str, total_in: int, write: int, read: int, out: int) -> float:
    price, known = pricing.price_for(model)
    assert known, model
    reported = {"input_tokens": total_in - write - read, "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read, "output_tokens": out}
    return pricing.usage_from(reported, price).cost_usd


def priced_here() -> list[str]:
    return [m for m in source_models() if m not in RETIRED and pricing._lookup(m, pricing.BUILTIN) is not None]


def test_the_source_knows_the_models_specd_prices() -> None:
    models = priced_here()
    assert len(models) >= 10
    # every row of the table is the one specd picks for some model the source knows: no stale or invented rows
    rows = {key for key, price in pricing.BUILTIN.items() if any(pricing._lookup(m, pricing.BUILTIN) is price
                                                                  for m in models)}
    assert rows == set(pricing.BUILTIN), f"rows the source knows no model for: {set(pricing.BUILTIN) - rows}"


@pytest.mark.parametrize("usage", USAGES, ids=lambda u: "in{}-w{}-r{}-out{}".format(*u))
def test_every_model_costs_what_the_maintained_source_says(usage: tuple[int, int, int, int]) -> None:
    drift = {}
    for model in priced_here():
        ours, theirs = specd_cost(model, *usage), float(source_cost(model, *usage))
        if abs(ours - theirs) > max(1e-6, theirs * 1e-6):
            drift[model] = (ours, theirs)
    assert drift == {}, f"specd's price table drifted from genai-prices (model: (specd, source)): {drift}"
