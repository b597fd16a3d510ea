"""One real step against the real API; runs only when ANTHROPIC_API_KEY is set (``pytest -m live``)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from specd.agents.base import AgentContext, Budget
from specd.events import EventBus
from specd.human import NoHuman

KEY = os.environ.get("ANTHROPIC_API_KEY", "")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not KEY or KEY.startswith("sk-ant-test"), reason="ANTHROPIC_API_KEY is not set"),
]


def test_one_real_step(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    from specd.agents.anthropic import AnthropicAgent

    agent = AnthropicAgent({"model": os.environ.get("SPECD_LIVE_MODEL", "claude-haiku-5-5")},
                           AgentContext(NoHuman(), EventBus()))
    request = project.request(
        prompt="Read FEATURE.md with read_file, then call complete_step with outcome 'approve' and a "
               "one-sentence summary of the feature.",
        max_turns=6, budget=Budget(max_step_cost_usd=0.10),
    )
    result = agent.run(request)
    assert result.outcome == "approve"
    assert result.usage.input_tokens + result.usage.cache_read_input_tokens > 0
    assert result.usage.cost_usd > 0
