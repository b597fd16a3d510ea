"""The claude_code backend in the contract suite: the real Claude Code CLI against the fake Messages API.

The same fake as the anthropic backend's, in Claude Code's tool names: ``Write`` (an absolute path, since
its working directory is the project root), ``Bash``, and ``StructuredOutput`` (built from specd's
``--json-schema``) for ``Finish``. A request that carries no specd prompt header is Claude Code's own (a
probe or a title) and gets a plain answer without using an action. An inline hook resumes the step's
session with ``--resume``, so ``resumes_sessions`` is True.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from claude_cli import claude_binary, claude_env, prompt_text

from .anthropic_api import AnthropicAPI
from .base import Action, Shell, Write

HEADER = re.compile(r"# specd (?:step|hook): ")


class ClaudeCode(AnthropicAPI):
    name = "claude_code"
    resumes_sessions = True
    # Claude Code keeps each Bash call's output in a folder of its own in the jail's fresh /tmp.
    own_folders = (f"/tmp/claude-{os.getuid()}",)

    def __init__(self) -> None:
        super().__init__()
        self.bin = ""
        self.home = Path()

    def require(self) -> None:
        self.bin = claude_binary()

    def start(self, tmp_path: Path) -> None:
        super().start(tmp_path)
        self.home = tmp_path / "claude-home"

    def env(self) -> dict[str, str]:
        return claude_env({}, url=self.server.url, home=self.home, binary=self.bin)

    def agent(self, **extra: Any) -> dict[str, Any]:
        # Bash allowed whole, as a user might: the jail has to hold whatever the model runs.
        return {"backend": "claude_code", "allowed_tools": ["Read", "Edit(/**)", "Write", "Bash"], **extra}

    def reply(self, body: dict[str, Any]) -> fake.Reply:
        if not HEADER.search(prompt_text(body)):
            return fake.message("ok")
        return super().reply(body)

    def call(self, action: Action) -> dict[str, Any]:
        if isinstance(action, Write):
            return fake.tool("Write", file_path=str(self.root / action.path), content=action.text)
        if isinstance(action, Shell):
            return fake.tool("Bash", command=action.command, description="run it")
        extra = {"output": action.output} if action.output is not None else {}
        return fake.tool("StructuredOutput", outcome=action.outcome, summary=action.summary, **extra)


BACKEND = ClaudeCode
