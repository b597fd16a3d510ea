"""`checks:` with the real Claude Code CLI against the fake Messages API: the failing check's output reaches
the model in the next attempt's prompt, and the model's edit (made by Claude Code's own tools) passes it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from calc_kit import calc_project
from claude_cli import claude_binary, claude_env, claude_specd, prompt_text

FEEDBACK = "Checks failed, so this step runs again"


class Model:
    """Attempt 1 reports done at once; once told a check failed, it reads calc.py, fixes it, then reports done."""

    def __init__(self, calc: Path) -> None:
        self.calc = calc
        self.prompts: list[str] = []

    def __call__(self, body: dict[str, Any]) -> fake.Reply:
        self.prompts.append(prompt_text(body))
        done = fake.tool("StructuredOutput", outcome="done", summary="finished")
        if FEEDBACK not in self.prompts[-1]:
            return fake.message(done)
        used = [block.get("name") for message in body["messages"] if message["role"] == "assistant"
                and isinstance(message["content"], list) for block in message["content"]]
        if "Edit" in used:
            return fake.message(done)
        if "Read" in used:
            return fake.message(fake.tool("Edit", file_path=str(self.calc), old_string="a - b", new_string="a + b"))
        return fake.message(fake.tool("Read", file_path=str(self.calc)))


def test_claude_code_sees_the_failing_check_and_fixes_the_code(tmp_path: Path) -> None:
    binary = claude_binary()
    root = tmp_path / "proj"
    calc_project(root)
    model = Model(root / "calc.py")
    with fake.FakeAnthropic(responder=model) as server:
        env = claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary)
        env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
        specd = claude_specd(root, env)

        assert specd("new", "t").returncode == 0
        run = specd("continue", "t", "--auto", "--agent", "claude_code")
        status = json.loads(specd("status", "t", "--json").stdout)

    assert run.returncode == 0, run.stdout + run.stderr
    told = [p for p in model.prompts if FEEDBACK in p]
    assert told
    assert "FAILED test_add: add(2, 2) returned 0" in told[0]  # the first attempt's check output, to the model
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert [(h["kind"], h["outcome"]) for h in status["history"]] == [
        ("step", "done"), ("checks", "failed"), ("step", "done"), ("checks", "passed")]
