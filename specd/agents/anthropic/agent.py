"""The Anthropic backend: a Messages API tool loop for one step (or hook).

Read ``StepRun.run`` top to bottom: open the conversation, then call the
model, run its tools, save, until ``complete_step``. The budget is checked
before every call; the conversation is saved after every turn and on the way
out of any failure, so a re-run continues instead of starting over.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from specd.agents.anthropic import caching, context, pricing, repeats
from specd.agents.anthropic.calls import Caller, Sleep, TurnCaller, TurnFailed, build_client, default_sleep
from specd.agents.anthropic.conversation import HANDOFF_REQUEST, Conversation
from specd.agents.anthropic.schemas import tools_for
from specd.agents.anthropic.store import ConversationStore, Transcript
from specd.agents.anthropic.toolbox import Toolbox
from specd.agents.base import AgentContext, AgentFailed, AgentRequest, AgentResult, BudgetExhausted, Usage
from specd.errors import ConfigError
from specd.redact import redact

DEFAULT_MODEL = "claude-sonnet-5-5"
NUDGE = (
    "(specd) You ended your turn without calling complete_step. If the step's work is done, call "
    "complete_step now with one of the allowed outcomes ({outcomes}) and a summary; otherwise continue."
)


class AnthropicAgent:
    name = "anthropic"
    holds = ("max_step_cost_usd", "max_step_tokens")  # checked before every model call

    def __init__(
        self, settings: Mapping[str, Any], ctx: AgentContext, *, client: Any | None = None, sleep: Sleep | None = None
    ) -> None:
        self.settings = dict(settings)
        self.ctx = ctx
        self._client = client
        self._sleep = sleep or default_sleep

    def client(self, settings: Mapping[str, Any]) -> Any:
        if self._client is None:
            try:
                self._client = build_client(settings, self.ctx.events, self._sleep)
            except ImportError as err:
                raise ConfigError(f"the anthropic agent needs the anthropic package ({err})",
                                  fix="pip install 'anthropic>=2,<3'") from None
        return self._client

    def run(self, request: AgentRequest) -> AgentResult:
        settings = {**self.settings, **request.settings}
        # Which jail the agent's commands get is said once, on the run's first line (specd.engine.jail_line).
        return StepRun(self, request, settings).run()


class StepRun:
    """One step's tool loop. The API's own parts (client, price, request shape, usage) sit in ``connect``,
    ``params`` and ``usage_of``, which the openai backend overrides; the loop itself is shared."""

    api_name = "Anthropic API"
    caller: TurnCaller

    def __init__(self, agent: AnthropicAgent, request: AgentRequest, settings: Mapping[str, Any]) -> None:
        self.request, self.settings, self.events = request, settings, agent.ctx.events
        self.model = str(request.model or settings.get("model") or DEFAULT_MODEL)
        self.max_turns = int(request.max_turns or settings.get("max_turns") or 40)
        self.store = ConversationStore(request)
        self.transcript = Transcript(request)
        self.toolbox = Toolbox(request, agent.ctx.human, settings.get("allow_commands") or [],
                               float(settings.get("command_timeout", 600)), settings)
        self.connect(agent)
        self.system = context.system_prompt(request)
        self.usage = Usage()
        self.conv = Conversation(request)
        self.tools = tools_for(request.output_schema)
        self._logged = 0
        # The step's timeout is checked between turns: a call in flight has its own request timeout.
        self.deadline = time.monotonic() + request.timeout if request.timeout else None

    def run(self) -> AgentResult:
        try:
            self.conv = Conversation.open(self.request, self.store.load())
            if self.conv.resumed:
                self.events.emit("notice", message=f"{self.request.step}: resuming the saved conversation")
            self.save()
            return self.loop()
        except TurnFailed as err:
            self.save()
            raise AgentFailed(f"{self.api_name}: {err}; the conversation is saved and re-running the step "
                              "resumes it", self.usage, self.transcript.path) from None
        except KeyboardInterrupt:
            self.save()
            self.transcript.write("interrupted")
            raise

    def loop(self) -> AgentResult:
        nudged = False
        for _ in range(self.max_turns):
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.save()
                raise AgentFailed(f"timed out after {self.request.timeout:g} s; the conversation is saved and "
                                  "re-running the step resumes it", self.usage, self.transcript.path)
            if self.near_window():
                self.hand_off()
            turn = self.call()
            self.conv.add_assistant(turn.content)
            self.save()
            uses = [b for b in turn.content if b.get("type") == "tool_use"]
            if uses:
                self.conv.add_user([self.run_tool(b) for b in uses])
                if self.toolbox.completion is not None:
                    return self.finish()
                self.save()
            elif turn.stop_reason == "refusal":
                raise AgentFailed("the model refused to continue this step", self.usage, self.transcript.path)
            elif turn.stop_reason == "max_tokens":
                self.conv.add_user([{"type": "text", "text": "(specd) Your reply was cut off; continue."}])
            elif not nudged:
                nudged = True
                text = NUDGE.format(outcomes=", ".join(self.toolbox.outcomes))
                self.conv.add_user([{"type": "text", "text": text}])
            else:
                return self.fallback()
        self.save()
        raise AgentFailed(f"step {self.request.step} did not call complete_step within {self.max_turns} turns "
                          "(raise agent.max_turns to allow more)", self.usage, self.transcript.path)

    def connect(self, agent: AnthropicAgent) -> None:
        """The API client (behind ``self.caller``), the model's price and its context window."""
        self.price, known = pricing.price_for(self.model, self.settings.get("pricing"))
        if not known:
            self.events.emit("warning", message=f"no price known for model {self.model}; counting it at the "
                             "highest known price (set agent.pricing to correct this)")
        self.window = pricing.context_window(self.model, self.settings.get("context_window"))
        self.caller = Caller(agent.client(self.settings), self.settings, self.events, agent._sleep)

    def params(self) -> dict[str, Any]:
        """The next call's request, from the stored conversation."""
        tools, system, messages = caching.request_parts(
            self.tools, self.system, self.conv.messages, enabled=bool(self.settings.get("prompt_caching", True)),
            long=caching.lasting(self.request.mode))
        return {"model": self.model, "max_tokens": int(self.settings.get("max_output_tokens", 32_000)),
                "system": system, "tools": tools, "messages": messages}

    def usage_of(self, turn: Any) -> Usage:
        return pricing.usage_from(turn.usage, self.price)

    def call(self) -> Any:
        params = self.params()
        # Refused before it is sent, if even this call's prompt alone would pass a budget.
        ahead = pricing.estimate_input(params, self.price)
        reason = self.request.budget.check(self.usage, ahead)
        if reason:
            self.save()
            self.transcript.write("budget", reason=reason)
            raise BudgetExhausted(reason, self.usage, ahead.cost_usd)
        self.log_request()
        turn = self.caller.call(params, self.transcript.write)
        used = self.usage_of(turn)
        self.usage = self.usage + used
        self.conv.context_tokens = used.total_tokens
        self.transcript.write("response", id=turn.message_id, stop_reason=turn.stop_reason,
                              content=turn.content, usage=used.as_dict())
        run_cost = round(self.request.budget.run_spent.cost_usd + self.usage.cost_usd, 6)
        self.events.emit("usage", step=self.request.step, **used.as_dict(), run_cost_usd=run_cost)
        for block in turn.content:
            if block.get("type") == "text" and block.get("text", "").strip():
                self.events.emit("agent_text", step=self.request.step, text=redact(block["text"]))
        return turn

    def log_request(self) -> None:
        # The whole conversation is resent on every call; log only what is new since the last one.
        new = self.conv.messages[self._logged:]
        extra = {"system": self.system, "tools": [t["name"] for t in self.tools]} if self._logged == 0 else {}
        self.transcript.write("request", model=self.model, messages=new, **extra)
        self._logged = len(self.conv.messages)

    def run_tool(self, block: dict[str, Any]) -> dict[str, Any]:
        name, args = str(block.get("name")), block.get("input") or {}
        # Redact before cutting: a secret cut in half no longer matches and would leak its first half.
        summary = ", ".join(f"{k}={redact(str(v))[:60]!r}" for k, v in args.items()
                            if k not in {"content", "new_string"})
        self.events.emit("agent_tool", step=self.request.step, tool=name, summary=summary)
        output, is_error = self.toolbox.call(name, args if isinstance(args, dict) else {})
        if not is_error and isinstance(args, dict):
            output = repeats.pointer(self.conv.messages, name, args, output) or output
        self.transcript.write("tool", name=name, input=args, is_error=is_error, output=output[:4000])
        return {"type": "tool_result", "tool_use_id": block["id"], "content": output or "(no output)",
                "is_error": is_error}

    def near_window(self) -> bool:
        # Under two model turns in, a fresh conversation would be just as full: handing off cannot help.
        full = self.conv.context_tokens >= self.window * float(self.settings.get("handoff_ratio", 0.8))
        return full and len(self.conv.messages) > 3

    def hand_off(self) -> None:
        used, window = self.conv.context_tokens, self.window
        self.events.emit("notice", step=self.request.step, handoff=True,
                         message=f"{self.request.step}: context nearly full ({used} of {window} tokens); "
                                 "continuing in a fresh conversation with a handoff note")
        self.conv.add_user([{"type": "text", "text": HANDOFF_REQUEST}])
        turn = self.call()
        note = "\n".join(b.get("text", "") for b in turn.content if b.get("type") == "text")
        self.store.archive(self.conv.handoffs + 1)
        self.transcript.write("handoff", number=self.conv.handoffs + 1, context_tokens=used, note=note)
        self.conv.hand_off(note)
        self._logged = 0
        self.save()

    def finish(self) -> AgentResult:
        done = self.toolbox.completion
        assert done is not None
        self.conv.status = "closed"
        self.save()
        self.transcript.write("complete", outcome=done.outcome, summary=done.summary, usage=self.usage.as_dict())
        return AgentResult(done.outcome, done.summary, self.usage, self.transcript.path, done.data, reported=True)

    def fallback(self) -> AgentResult:
        """No complete_step, even after a reminder: the workflow's verdict file (read by the dispatcher,
        as for every backend) may still decide; without one, the step failed."""
        self.save()
        name = self.request.frontmatter.get("verdict_file")
        if not name:
            raise AgentFailed(f"the agent ended step {self.request.step} without calling complete_step, even after "
                              "a reminder", self.usage, self.transcript.path)
        self.events.emit("warning", message=f"{self.request.step}: no complete_step call; the Verdict line in "
                         f"{name} decides the outcome")
        self.conv.status = "closed"
        self.save()
        self.transcript.write("complete", outcome=None, summary="", usage=self.usage.as_dict())
        return AgentResult(usage=self.usage, transcript=self.transcript.path)

    def save(self) -> None:
        self.store.save(self.conv.snapshot())
