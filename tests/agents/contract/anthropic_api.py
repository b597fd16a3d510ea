"""The anthropic backend in the contract suite: the real ``anthropic`` SDK against the fake Messages API.

Each action becomes one reply of the fake (``tests/fake_anthropic.py``): ``Write`` a ``write_file`` call,
``Shell`` a ``run_command`` call, ``Finish`` a ``complete_step`` call. The conversation of a step is kept
and an inline hook continues it, so ``resumes_sessions`` is True.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fake_anthropic as fake

from .base import Action, Shell, Turns, Usage, Write, strings

KEY = "sk-ant-test-CONTRACT-0123456789"


class AnthropicAPI:
    name = "anthropic"
    resumes_sessions = True
    own_folders: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.turns = Turns()
        self.taken: list[dict[str, Any]] = []
        self.root = Path()
        self.server: Any = None

    def require(self) -> None:
        """The SDK is a dependency of specd: always here."""

    def start(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        self.server = fake.FakeAnthropic(responder=self.reply).start()

    def stop(self) -> None:
        self.server.stop()

    def env(self) -> dict[str, str]:
        return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": self.server.url}

    def agent(self, **extra: Any) -> dict[str, Any]:
        return {"backend": "anthropic", "model": "claude-sonnet-4-5", "allow_commands": ["*"], **extra}

    def script(self, turns: list[list[Action]]) -> None:
        self.turns.load(turns)

    def requests(self) -> list[dict[str, Any]]:
        return list(self.taken)

    def text(self, body: dict[str, Any]) -> str:
        return strings([body.get("system"), body.get("messages")])

    def usages(self) -> list[Usage]:
        return [Usage(u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
                      u["cache_creation_input_tokens"]) for u in self.server.usages]

    def reply(self, body: dict[str, Any]) -> fake.Reply:
        action = self.turns.take()
        if action is None:
            return fake.error(400)
        self.taken.append(body)
        return fake.message(self.call(action))

    def call(self, action: Action) -> dict[str, Any]:
        """The tool call that plays ``action`` on this backend."""
        if isinstance(action, Write):
            return fake.tool("write_file", path=action.path, content=action.text)
        if isinstance(action, Shell):
            return fake.tool("run_command", command=action.command)
        extra = {"output": action.output} if action.output is not None else {}
        return fake.tool("complete_step", outcome=action.outcome, summary=action.summary, **extra)


BACKEND = AnthropicAPI
