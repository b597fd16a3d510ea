"""From the pipeline's ``agent:`` block and a request to ``codex exec``'s command line.

Codex has no flags for a turn limit or a budget, so those are kept by specd while the stream is read
(``specd.agents.codex.stream``) and before the step starts. What it does have is used: ``--json`` for its
event stream, ``--output-schema`` for the outcome, ``--model``, ``-c`` overrides for the provider, and
``exec resume`` for an inline hook.

Its own sandbox is set to ``danger-full-access``: Codex's Linux sandbox needs namespaces and seccomp that
a process already inside specd's bubblewrap jail (no capabilities, user namespaces disabled) cannot get,
so every shell command would fail. The jail is the boundary instead: the same one Claude Code runs in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from specd.agents.base import AgentRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PROVIDER = "specd"  # the model provider specd defines on the command line, unless the project's config has one
PRICE_KEYS = ("model", "price_per_mtok", "pricing")
SANDBOX = "danger-full-access"  # specd's jail is the sandbox; see the module's docstring


@dataclass(frozen=True)
class Options:
    model: str | None = None
    max_turns: int | None = None
    base_url: str | None = None
    key_env: str = DEFAULT_KEY_ENV
    extra_args: tuple[str, ...] = ()
    pricing: Mapping[str, Any] = field(default_factory=dict)  # model, price_per_mtok, pricing: for the cost

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Options:
        turns = settings.get("max_turns")
        extra = settings.get("extra_args")
        return cls(model=settings.get("model") or None, max_turns=int(turns) if turns else None,
                   base_url=str(settings.get("base_url") or "") or None,
                   key_env=str(settings.get("api_key_env") or DEFAULT_KEY_ENV),
                   extra_args=tuple(str(a) for a in extra) if extra else (),
                   pricing={k: settings[k] for k in PRICE_KEYS if k in settings})

    def url(self, env: Mapping[str, str]) -> str:
        """The Responses API base: ``agent.base_url``, else ``OPENAI_BASE_URL``, else OpenAI's."""
        return self.base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    def argv(self, binary: str, request: AgentRequest, schema: Path, *, thread: str | None,
             own_provider: bool, env: Mapping[str, str] | None = None, url: str | None = None) -> list[str]:
        """The whole command line; the prompt itself goes to stdin (the final ``-``). ``url``: where Codex's
        requests go instead of the API's own (specd's key guard)."""
        env = os.environ if env is None else env
        argv = [binary, "exec", "--json", "--skip-git-repo-check", "--sandbox", SANDBOX,
                "--output-schema", str(schema), "--color", "never", "-c", 'approval_policy="never"']
        if not own_provider:
            argv += provider_overrides(url or self.url(env), self.key_env)
        model = self.model_for(request)
        if model:
            argv += ["--model", model]
        argv += list(self.extra_args)
        # Flags of `exec` come before `resume`, which takes only the session id and the prompt.
        return argv + (["resume", thread, "-"] if thread else ["-"])

    def model_for(self, request: AgentRequest) -> str | None:
        return request.model or self.model

    def turns_for(self, request: AgentRequest) -> int | None:
        return request.max_turns or self.max_turns


def provider_overrides(url: str, key_env: str) -> list[str]:
    """``-c`` pairs defining the provider specd talks to: the Responses API at ``url``, signed in with the
    key in ``key_env`` (Codex reads the variable itself; its value never reaches the command line)."""
    values = {"name": PROVIDER, "base_url": url, "env_key": key_env, "wire_api": "responses"}
    pairs = [f"model_provider={json.dumps(PROVIDER)}"]
    pairs += [f"model_providers.{PROVIDER}.{key}={json.dumps(value)}" for key, value in values.items()]
    return [part for pair in pairs for part in ("-c", pair)]


def host_rule(url: str) -> str:
    """The proxy's rule for the API's host: ``host:port``, as the jail's network list spells it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
