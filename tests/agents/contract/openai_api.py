"""The openai backend in the contract suite: the real ``openai`` SDK against the fake chat completions API.

Each action becomes one reply of the fake (``tests/fake_openai.py``) with one tool call: ``write_file``,
``run_command`` or ``complete_step``, the anthropic backend's tools over the OpenAI wire. The fake reports
``prompt_tokens`` including the cached prefix; ``usages`` splits it into fresh and cached input, as specd
records it. The model is priced in the agent block so a cost cap can hold. An inline hook continues the
step's conversation, so ``resumes_sessions`` is True.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openai_app import fake

from .base import Action, Shell, Turns, Usage, Write, strings

PRICE = {"input": 2.0, "output": 8.0, "cache_read": 0.5}


class OpenAIAPI:
    name = "openai"
    resumes_sessions = True
    own_folders: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.turns = Turns()
        self.taken: list[dict[str, Any]] = []
        self.server: Any = None

    def require(self) -> None:
        """The SDK is a dependency of specd: always here."""

    def start(self, tmp_path: Path) -> None:
        self.server = fake.FakeOpenAI(responder=self.reply).start()

    def stop(self) -> None:
        self.server.stop()

    def env(self) -> dict[str, str]:
        return {}  # a local base_url needs no key

    def agent(self, **extra: Any) -> dict[str, Any]:
        return {"backend": "openai", "base_url": self.server.base_url, "model": "local-coder",
                "price_per_mtok": PRICE, "allow_commands": ["*"], **extra}

    def script(self, turns: list[list[Action]]) -> None:
        self.turns.load(turns)

    def requests(self) -> list[dict[str, Any]]:
        return list(self.taken)

    def text(self, body: dict[str, Any]) -> str:
        return strings(body.get("messages"))

    def usages(self) -> list[Usage]:
        found = []
        for usage in self.server.usages:
            cached = usage["prompt_tokens_details"]["cached_tokens"]
            found.append(Usage(usage["prompt_tokens"] - cached, usage["completion_tokens"], cached, 0))
        return found

    def reply(self, body: dict[str, Any]) -> Any:
        action = self.turns.take()
        if action is None:
            return fake.error(400)
        self.taken.append(body)
        if isinstance(action, Write):
            return fake.message(fake.call("write_file", path=action.path, content=action.text))
        if isinstance(action, Shell):
            return fake.message(fake.call("run_command", command=action.command))
        extra = {"output": action.output} if action.output is not None else {}
        return fake.complete(action.outcome, action.summary, **extra)


BACKEND = OpenAIAPI
