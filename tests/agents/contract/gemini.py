"""The gemini backend in the contract suite: the real Gemini CLI against the fake Gemini API.

Each action becomes one reply of the fake (``tests/fake_gemini.py``) in the CLI's own tool names:
``write_file`` (an absolute path) for ``Write``, ``run_shell_command`` for ``Shell``, and for ``Finish``
the final JSON object specd's prompt asks for (the CLI takes no output schema). The CLI's side questions
(``generateContent``) are answered by the fake itself and take no action. An inline hook resumes the
step's session with ``--resume``, so ``resumes_sessions`` is True.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_gemini as fake
from gemini_cli import gemini_binary, gemini_env

from .base import Action, Shell, Turns, Usage, Write, strings

CACHED = 200  # of each request's prompt tokens, reported as cached: specd records the two apart


class Gemini:
    name = "gemini"
    resumes_sessions = True
    own_folders: tuple[str, ...] = ()
    # The CLI's shell sets these itself (git hardening: credential.helper, core.hooksPath... emptied); they are
    # secret-named only by their `KEY`, and hold git config names, never a value of the machine.
    own_env = tuple(f"GIT_CONFIG_KEY_{n}" for n in range(8))

    def __init__(self) -> None:
        self.turns = Turns()
        self.taken: list[dict[str, Any]] = []
        self.reported: list[Usage] = []
        self.root = Path()
        self.home = Path()
        self.bin = ""
        self.server: Any = None

    def require(self) -> None:
        self.bin = gemini_binary()

    def start(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        self.home = tmp_path / "gemini-home"
        self.server = fake.FakeGemini(responder=self.reply).start()

    def stop(self) -> None:
        self.server.stop()

    def env(self) -> dict[str, str]:
        return gemini_env({}, url=self.server.url, home=self.home, binary=self.bin)

    def agent(self, **extra: Any) -> dict[str, Any]:
        return {"backend": "gemini", "model": "gemini-2.5-pro", **extra}

    def script(self, turns: list[list[Action]]) -> None:
        self.turns.load(turns)

    def requests(self) -> list[dict[str, Any]]:
        return list(self.taken)

    def text(self, body: dict[str, Any]) -> str:
        return strings([body.get("systemInstruction"), body.get("contents")])

    def usages(self) -> list[Usage]:
        return list(self.reported)

    def reply(self, body: dict[str, Any]) -> fake.Reply:
        action = self.turns.take()
        if action is None:
            return fake.error(400)
        self.taken.append(body)
        answer = fake.reply(self.part(action), cached_tokens=CACHED)
        self.reported.append(Usage(answer.prompt_tokens - CACHED, answer.output_tokens, CACHED, 0))
        return answer

    def part(self, action: Action) -> dict[str, Any]:
        """The part of the model's reply that plays ``action`` on this backend."""
        if isinstance(action, Write):
            return fake.call("write_file", file_path=str(self.root / action.path), content=action.text)
        if isinstance(action, Shell):
            return fake.call("run_shell_command", command=action.command)
        answer = {"outcome": action.outcome, "summary": action.summary}
        if action.output is not None:
            answer["output"] = action.output
        return fake.text(json.dumps(answer))


BACKEND = Gemini
