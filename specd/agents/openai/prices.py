"""What a chat completions call cost: the model's price, and the reported usage turned into USD.

A price comes from the pipeline first (``agent.price_per_mtok: {input, output}``, then the ``agent.pricing``
table the anthropic backend also reads), else from the few OpenAI models listed here (USD per million
tokens; tests/agents/test_openai_prices.py compares them with the ``genai-prices`` package). A local model
has no price anywhere: its tokens are still counted, and a run with a cost cap is refused before it starts
(``specd.agents.openai.agent``), since counting such a model as free would make the cap meaningless.

Servers report ``prompt_tokens`` with the cached part inside it (``prompt_tokens_details.cached_tokens``);
specd records the two apart, as for Anthropic. A cached token is priced as a fresh one unless the price
says otherwise: over-counting stops a run early at its budget, under-counting lets it overspend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specd.agents.anthropic.pricing import Price, _lookup
from specd.agents.base import Usage

FREE = Price(0.0, 0.0, 0.0, 0.0)


def _p(input_: float, output: float, cached: float) -> Price:
    return Price(input_, output, input_, cached)  # OpenAI bills no cache writes: they cost as input


BUILTIN: dict[str, Price] = {
    "gpt-4o": _p(2.5, 10, 1.25),
    "gpt-4o-mini": _p(0.15, 0.6, 0.075),
    "gpt-4.1": _p(2, 8, 0.5),
    "gpt-4.1-mini": _p(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _p(0.1, 0.4, 0.025),
    "gpt-5": _p(1.25, 10, 0.125),
    "gpt-5-mini": _p(0.25, 2, 0.025),
    "gpt-5-nano": _p(0.05, 0.4, 0.005),
    "gpt-5.1": _p(1.25, 10, 0.125),
    "gpt-5.2": _p(1.75, 14, 0.175),
    "gpt-5.4-mini": _p(0.75, 4.5, 0.075),
    "gpt-5.4-nano": _p(0.2, 1.25, 0.02),
}


def price_for(model: str, settings: Mapping[str, Any]) -> tuple[Price, bool]:
    """(price, known). Unknown means FREE, and the caller decides what that is allowed to mean.

    ``price_per_mtok`` is the price of its agent block's own ``model``: a step that names another
    model is priced from the table, or not at all."""
    own = settings.get("price_per_mtok")
    if isinstance(own, Mapping) and model == settings.get("model"):
        base = float(own["input"])
        return Price(base, float(own["output"]), base, float(own.get("cache_read", base))), True
    table = settings.get("pricing")
    if isinstance(table, Mapping) and (found := _lookup(model, table)) is not None:
        return Price.from_mapping(found), True
    # Exact names only: OpenAI's dated snapshots do not always cost what their alias costs.
    known = BUILTIN.get(model)
    return (known, True) if known is not None else (FREE, False)


def usage_from(reported: Any, price: Price) -> Usage:
    """A ``Usage`` (with cost) from a chat completion's ``usage`` (the SDK's object or a plain dict)."""

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

    if reported is None:
        return Usage()
    prompt, output = int(get(reported, "prompt_tokens") or 0), int(get(reported, "completion_tokens") or 0)
    details = get(reported, "prompt_tokens_details")
    cached = min(int(get(details, "cached_tokens") or 0) if details is not None else 0, prompt)
    fresh = prompt - cached
    cost = (fresh * price.input + cached * price.cache_read + output * price.output) / 1e6
    return Usage(fresh, output, 0, cached, round(cost, 6))
