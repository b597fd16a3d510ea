"""What a Gemini CLI step cost: its per-model token counts priced from a table, since the CLI reports no cost.

Prices are USD per million tokens (Google's pricing page, checked against the ``genai-prices`` package by
tests/agents/test_gemini_prices.py). ``agent.pricing`` in the pipeline file overrides or extends the table.
The CLI sums each model's tokens over the whole step, so the per-request long-prompt rate of the Pro models
cannot be applied call by call: once a model's input in the step passes the threshold, the whole step is
priced at the higher rate. That can over-count, never under-count: over-counting stops a run early at its
budget, under-counting lets it overspend. A model the table does not know is priced at the dearest known
rate, for the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specd.agents.anthropic.pricing import Price, _lookup
from specd.agents.base import Usage

LONG = 200_000  # input tokens past which the Pro models bill at their long-prompt rate


def _p(input_: float, output: float, cached: float, long: Price | None = None) -> Price:
    return Price(input_, output, input_, cached, (LONG, long) if long else None)  # no cache writes billed


_PRO_3 = _p(2, 12, 0.2, _p(4, 18, 0.4))
BUILTIN: dict[str, Price] = {
    "gemini-3.1-pro-preview": _PRO_3,
    "gemini-3-pro-preview": _PRO_3,
    "gemini-3.5-flash": _p(1.5, 9, 0.15),
    "gemini-3-flash-preview": _p(0.5, 3, 0.05),
    "gemini-3.1-flash-lite-preview": _p(0.25, 1.5, 0.025),
    "gemini-2.5-pro": _p(1.25, 10, 0.125, _p(2.5, 15, 0.25)),
    "gemini-2.5-flash": _p(0.3, 2.5, 0.03),
    "gemini-2.5-flash-lite": _p(0.1, 0.4, 0.01),
}
FALLBACK = _p(4, 18, 0.4)  # the dearest rate above


def price_for(model: str, settings: Mapping[str, Any]) -> tuple[Price, bool]:
    """(price, known): the pipeline's ``agent.pricing`` first, then the table by exact name."""
    table = settings.get("pricing")
    if isinstance(table, Mapping) and (found := _lookup(model, table)) is not None:
        return Price.from_mapping(found), True
    known = BUILTIN.get(model)
    return (known, True) if known is not None else (FALLBACK, False)


def usage_from(stats: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[Usage, list[str]]:
    """The step's Usage from the ``stats`` of the CLI's result event, and the models no price was known for.

    ``input_tokens`` counts the cached part too (``cached``); specd records the fresh and cached parts apart."""
    models = stats.get("models")
    rows = models if isinstance(models, Mapping) and models else {"": stats}
    total, unknown = Usage(), []
    for model, row in rows.items():
        if not isinstance(row, Mapping):
            continue
        prompt, output = _count(row.get("input_tokens")), _count(row.get("output_tokens"))
        cached = min(_count(row.get("cached")), prompt)
        price, known = price_for(str(model), settings)
        if not known:
            unknown.append(str(model) or "an unnamed model")
        if price.long_prompt is not None and prompt > price.long_prompt[0]:
            price = price.long_prompt[1]
        cost = ((prompt - cached) * price.input + cached * price.cache_read + output * price.output) / 1e6
        total = total + Usage(prompt - cached, output, 0, cached, round(cost, 6))
    return total, unknown


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0
