"""The codex backend in the contract suite: the real Codex CLI against the fake Responses API.

Each action becomes one reply of the fake (``tests/fake_codex.py``): ``Write`` and ``Shell`` are calls of
Codex's own ``exec_command`` tool (a file is written by a shell command, as Codex itself does when it does
not patch), and ``Finish`` is the final message holding the JSON that specd's ``--output-schema`` asks for.
A command that outlasts Codex's wait (at most 30 s) is polled with ``write_stdin`` until it ends, without
using an action. The fake reports ``input_tokens`` including the cached prefix; ``usages`` splits it into
fresh and cached input, as specd records it. An inline hook resumes the step's thread with ``codex exec resume``, so
``resumes_sessions`` is True.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import fake_codex as fake
from codex_cli import MODEL, codex_binary, codex_env

from .base import Action, Shell, Turns, Usage, Write, strings


class Codex:
    name = "codex"
    resumes_sessions = True
    own_folders: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.turns = Turns()
        self.taken: list[dict[str, Any]] = []
        self.took: list[bool] = []  # per answered request: whether it used an action (a poll does not)
        self.server: Any = None
        self.bin = ""
        self.home = Path()

    def require(self) -> None:
        self.bin = codex_binary()

    def start(self, tmp_path: Path) -> None:
        self.home = tmp_path / "codex-home"
        self.server = fake.FakeCodexAPI(responder=self.reply).start()

    def stop(self) -> None:
        self.server.stop()

    def env(self) -> dict[str, str]:
        return codex_env({}, home=self.home, binary=self.bin)

    def agent(self, **extra: Any) -> dict[str, Any]:
        return {"backend": "codex", "base_url": self.server.base_url, "model": MODEL, **extra}

    def script(self, turns: list[list[Action]]) -> None:
        self.turns.load(turns)

    def requests(self) -> list[dict[str, Any]]:
        return list(self.taken)

    def text(self, body: dict[str, Any]) -> str:
        return strings(body.get("input"))

    def usages(self) -> list[Usage]:
        found = []
        for usage, took in zip(self.server.usages, self.took, strict=True):
            if not took:
                continue
            cached = usage["input_tokens_details"]["cached_tokens"]
            found.append(Usage(usage["input_tokens"] - cached, usage["output_tokens"], cached, 0))
        return found

    def reply(self, body: dict[str, Any]) -> fake.Reply:
        session = fake.still_running(body)
        if session is not None:  # a command outlasted Codex's wait: poll it, which is no action of the script
            self.took.append(False)
            return fake.reply(fake.poll(session))
        action = self.turns.take()
        if action is None:
            return fake.error(400)
        self.taken.append(body)
        self.took.append(True)
        if isinstance(action, Write):
            folder, path, text = (shlex.quote(part) for part in (str(Path(action.path).parent), action.path,
                                                                  action.text))
            command = f"mkdir -p {folder} && printf %s {text} > {path}"
            return fake.reply(fake.shell(command))
        if isinstance(action, Shell):
            return fake.reply(fake.shell(action.command))
        report: dict[str, Any] = {"outcome": action.outcome, "summary": action.summary}
        if action.output is not None:
            report["output"] = action.output
        return fake.reply(json.dumps(report))


BACKEND = Codex
