"""Choose and build the agent backend: ``--agent`` wins, then the pipeline's ``agent:`` block.

Backends import lazily, so choosing the command agent never loads the anthropic SDK.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specd.agents.base import Agent, AgentContext, Budget
from specd.errors import ConfigError, UsageError

SPEC_HELP = ("use --agent anthropic, --agent claude_code, --agent codex[:<model>], --agent gemini[:<model>], "
             "--agent openai:<model>, "
             "--agent 'cmd:<shell command>' "
             "or --agent 'scripted:<script.yaml>' (or set agent.backend in the pipeline file)")


def make_agent(spec: str | None, settings: Mapping[str, Any], ctx: AgentContext, root: Path) -> Agent:
    backend, arg = _parse(spec, settings)
    if backend == "command":
        if not arg:
            raise ConfigError("the command agent needs a command: agent.command in the pipeline file",
                              fix="add e.g. \"command\": \"my-agent --stdin\", or pass --agent 'cmd:<command>'")
        from specd.agents.command import CommandAgent

        timeout = settings.get("command_timeout")
        return CommandAgent(arg, ctx, float(timeout) if timeout else None)
    if backend == "scripted":
        from specd.agents.scripted import ScriptedAgent

        if not arg:
            raise ConfigError("the scripted agent needs a script: agent.script in the pipeline file",
                              fix="pass --agent 'scripted:<script.yaml>'")
        return ScriptedAgent((root / arg).resolve(), ctx)
    if backend == "anthropic":
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise ConfigError("the anthropic agent needs ANTHROPIC_API_KEY in the environment",
                              fix="export ANTHROPIC_API_KEY=..., or use a backend that works here: "
                                  + ", ".join(_other_backends()))
        from specd.agents.anthropic import AnthropicAgent

        return AnthropicAgent({**settings, "model": arg or settings.get("model")} if arg else settings, ctx)
    if backend == "openai":
        return _openai(settings, arg, ctx)
    if backend == "claude_code":
        from specd.agents.claude_code import make_claude_code

        return make_claude_code(arg, settings, ctx)
    if backend == "codex":
        from specd.agents.codex import make_codex

        return make_codex(arg, settings, ctx)
    if backend == "gemini":
        from specd.agents.gemini import make_gemini

        return make_gemini(arg, settings, ctx)
    raise UsageError(f"unknown agent backend {backend!r}", fix=SPEC_HELP)


def _openai(settings: Mapping[str, Any], model: str | None, ctx: AgentContext) -> Agent:
    from specd.agents.openai import OpenAIAgent
    from specd.agents.openai.calls import base_url, key_env

    if not (model or settings.get("model")):
        raise ConfigError("the openai agent needs a model: agent.model in the pipeline file",
                          fix="add e.g. \"model\": \"gpt-5-mini\" (or your server's model name, such as "
                              "\"qwen3-coder\" on Ollama), or pass --agent openai:<model>")
    # A local server (base_url set) usually wants no key; OpenAI itself always does.
    if not base_url(settings) and not os.environ.get(key_env(settings)):
        raise ConfigError(f"the openai agent needs {key_env(settings)} in the environment (agent.api_key_env)",
                          fix=f"export {key_env(settings)}=..., or set agent.base_url to a local "
                              "OpenAI-compatible server (Ollama, vLLM), which needs no key")
    return OpenAIAgent(settings, ctx, model=model or None)


def _other_backends() -> list[str]:
    """What would run on this machine instead of anthropic: never the backend that just failed."""
    import shutil

    found = ["--agent claude_code"] if shutil.which(os.environ.get("SPECD_CLAUDE_BIN") or "claude") else []
    return [*found, "--agent 'cmd:<shell command>'", "--agent 'scripted:<script.yaml>'"]


STEP_CAPS = ("max_step_cost_usd", "max_step_tokens")


def check_caps(agent: Agent, budget: Budget, source: object) -> None:
    """A per-step cap the agent cannot keep while its step runs is refused before the run starts: one that
    only reports its usage at the end would pass it unseen (the run-wide caps hold for every agent: they
    are checked before each step)."""
    own = getattr(agent, "check_budget", None)
    if callable(own):  # a backend's own conditions on the caps (openai: a cost cap needs a priced model)
        own(budget, source)
    held = getattr(agent, "holds", STEP_CAPS)
    for key in STEP_CAPS:
        if getattr(budget, key) is not None and key not in held:
            name = getattr(agent, "name", "this")
            raise ConfigError(f"{source}: agent.{key}: the {name} agent cannot keep a per-step cap (it tells "
                              "what a step used only when the step has ended)",
                              fix=f"remove agent.{key}, cap the whole run instead (agent.max_cost_usd, "
                                  "agent.max_tokens or --max-cost: checked before every step), or run on an "
                                  "agent that keeps it (anthropic and openai keep both, claude_code the cost)")


def backend_of(spec: str | None, settings: Mapping[str, Any]) -> str | None:
    """The backend ``spec`` (else the pipeline's agent block) names; None for a spec that names none."""
    try:
        return _parse(spec, settings)[0]
    except UsageError:
        return None


def _parse(spec: str | None, settings: Mapping[str, Any]) -> tuple[str, str | None]:
    if spec:
        head, sep, rest = spec.partition(":")
        head = {"cmd": "command", "claude-code": "claude_code", "claude": "claude_code"}.get(head, head)
        if head in ("command", "scripted", "anthropic", "claude_code", "openai", "codex", "gemini"):
            return head, rest if sep else None
        raise UsageError(f"--agent {spec!r} is not an agent spec", fix=SPEC_HELP)
    backend = str(settings.get("backend", "anthropic"))
    arg = settings.get("command") if backend == "command" else settings.get("script")
    return backend, str(arg) if arg else None
