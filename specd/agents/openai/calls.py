"""One chat completions call per turn, retried by the ``openai`` SDK itself.

Unlike the anthropic backend, which streams and keeps its own retry layer, this one makes plain
(non-streamed) calls: the SDK then retries a whole call on a connection error, 408, 409, 429 and 5xx,
honouring retry-after, ``agent.max_retries`` times (default 4), each attempt with ``agent.request_timeout``
seconds (default 600). What still fails reaches the loop as ``TurnFailed``, and the step's conversation is
saved for a re-run. The ``openai`` package is imported here, at first use, and nowhere else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from specd.agents.anthropic.calls import Turn, TurnFailed
from specd.agents.openai import wire
from specd.redact import redact

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_KEY = "specd-no-key"  # the SDK wants some key; a local server that checks none ignores it


def key_env(settings: Mapping[str, Any]) -> str:
    return str(settings.get("api_key_env") or DEFAULT_KEY_ENV)


def base_url(settings: Mapping[str, Any]) -> str | None:
    return str(settings.get("base_url") or os.environ.get("OPENAI_BASE_URL") or "") or None


def build_client(settings: Mapping[str, Any]) -> Any:
    import openai

    return openai.OpenAI(
        api_key=os.environ.get(key_env(settings)) or LOCAL_KEY,
        base_url=base_url(settings),
        max_retries=int(settings.get("max_retries", 4)),
        timeout=float(settings.get("request_timeout", 600)),
    )


class Caller:
    def __init__(self, client: Any, settings: Mapping[str, Any]) -> None:
        self.client = client
        self.settings = settings

    def call(self, params: dict[str, Any], log: Callable[..., None]) -> Turn:
        import openai

        try:
            completion = self.client.chat.completions.create(**params)
        except openai.APIError as err:
            reason = redact(f"{type(err).__name__}: {err}")[:500]
            log("error", error=reason, after_retries=int(self.settings.get("max_retries", 4)))
            status = getattr(err, "status_code", None)
            hint = f"; check {key_env(self.settings)} and agent.base_url" if status in (401, 403) else ""
            raise TurnFailed(reason + hint) from err
        if not completion.choices:
            raise TurnFailed("the server answered with no choices")
        choice = completion.choices[0]
        reason = wire.STOP_REASONS.get(str(choice.finish_reason), str(choice.finish_reason))
        return Turn(wire.blocks(choice.message), reason, completion.usage, str(completion.id))
