"""The openai backend: the anthropic backend's step loop (``StepRun``), over chat completions.

Everything but the API is shared: the toolbox and its sandbox, ``run_command`` in the project tier of the
jail, ``complete_step`` with the step's outcomes and typed output, the budget check before each call, the
repeats check, resume and handoff, the transcript and the verdict file rule. This module supplies what
differs: the client, the price, the request (``wire``) and the usage. Prompt caching needs nothing sent:
servers that cache (OpenAI, vLLM's prefix cache) match the prefix themselves, and the conversation only
ever grows at its end, so each turn's prefix is the last one's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from specd.agents.anthropic.agent import AnthropicAgent, StepRun
from specd.agents.anthropic.pricing import CHARS_PER_TOKEN, estimate_input
from specd.agents.base import AgentContext, AgentRequest, AgentResult, Budget, Usage
from specd.agents.openai import calls, prices, wire
from specd.errors import ConfigError

DEFAULT_WINDOW = 128_000  # tokens; many local models have less: set agent.context_window


def cost_capped(budget: Budget) -> bool:
    return budget.max_cost_usd is not None or budget.max_step_cost_usd is not None


def refuse_unpriced(model: str, settings: Mapping[str, Any], budget: Budget, where: object) -> None:
    """A cost cap over a model with no price would count every call as free: refused, naming the fix."""
    if cost_capped(budget) and not prices.price_for(model, settings)[1]:
        raise ConfigError(f"{where}: no price is known for model {model!r}, so a cost cap (agent.max_cost_usd, "
                          "agent.max_step_cost_usd or --max-cost) cannot be kept",
                          fix="give its price in the agent block, e.g. \"price_per_mtok\": {\"input\": 0.5, "
                              "\"output\": 1.5} (USD per million tokens; 0 for a free local model), or cap "
                              "tokens instead (agent.max_tokens)")


def with_model(settings: Mapping[str, Any], model: str | None) -> Mapping[str, Any]:
    """``settings`` on another model; the block's ``price_per_mtok`` priced its own model, so it goes."""
    if not model or model == settings.get("model"):
        return settings
    return {**{k: v for k, v in settings.items() if k != "price_per_mtok"}, "model": model}


class OpenAIAgent(AnthropicAgent):
    """``model`` (from ``--agent openai:<model>``) replaces the pipeline's ``agent.model``; a step's own
    model still wins for that step."""

    name = "openai"

    def __init__(self, settings: Mapping[str, Any], ctx: AgentContext, *, model: str | None = None,
                 client: Any | None = None) -> None:
        super().__init__(with_model(settings, model), ctx, client=client)
        self.cli_model = model
        self.unpriced: set[str] = set()

    def client(self, settings: Mapping[str, Any]) -> Any:
        if self._client is None:
            try:
                self._client = calls.build_client(settings)
            except ImportError as err:
                raise ConfigError(f"the openai agent needs the openai package ({err})",
                                  fix="pip install 'openai>=2,<3'") from None
        return self._client

    def check_budget(self, budget: Budget, source: object) -> None:
        """Before the run starts (``specd.agents.factory.check_caps``)."""
        refuse_unpriced(str(self.settings.get("model")), self.settings, budget, source)

    def run(self, request: AgentRequest) -> AgentResult:
        return OpenAIStep(self, request, with_model({**self.settings, **request.settings}, self.cli_model)).run()


class OpenAIStep(StepRun):
    api_name = "OpenAI-compatible API"

    def connect(self, agent: AnthropicAgent) -> None:
        assert isinstance(agent, OpenAIAgent)
        # A step may name its own model: its price is checked here, where the model is known.
        refuse_unpriced(self.model, self.settings, self.request.budget, f"step {self.request.step}")
        self.price, known = prices.price_for(self.model, self.settings)
        if not known and self.model not in agent.unpriced:  # said once per model and run, not every step
            agent.unpriced.add(self.model)
            self.events.emit("notice", message=f"no price known for model {self.model}: its tokens are "
                             "recorded and its cost counted as $0 (set agent.price_per_mtok to count it)")
        self.window = int(self.settings.get("context_window") or DEFAULT_WINDOW)
        self.told_no_usage = False
        self.caller = calls.Caller(agent.client(self.settings), self.settings)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": wire.messages(self.system, self.conv.messages),
                                  "tools": wire.tools(self.tools, self.request.outcomes)}
        if self.settings.get("max_output_tokens"):
            params["max_completion_tokens"] = int(self.settings["max_output_tokens"])
        return params

    def usage_of(self, turn: Any) -> Usage:
        if turn.usage is not None:
            return prices.usage_from(turn.usage, self.price)
        # A server that reports no usage must not make the call free: count the prompt as sent, safe side.
        if not self.told_no_usage:
            self.told_no_usage = True
            self.events.emit("notice", message=f"{self.request.step}: the server reports no token usage; "
                             "counting an estimate from the request and reply sizes")
        sent = estimate_input(self.params(), self.price)
        out = len(json.dumps(turn.content, ensure_ascii=False)) // CHARS_PER_TOKEN + 1
        return Usage(sent.input_tokens, out, cost_usd=round(sent.cost_usd + out * self.price.output / 1e6, 6))
