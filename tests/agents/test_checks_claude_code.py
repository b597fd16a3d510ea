"""`checks:` with the real Claude Code CLI against the fake Messages API: the failing check's output reaches
the model in the next attempt's prompt, and the model's edit (made by Claude Code's own tools) passes it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from claude_cli import claude_binary, claude_env, prompt_text

CHECK = ("import sys\nsys.path.insert(0, '.')\nfrom calc import add\n"
         "if add(2, 2) != 4:\n    print(f'FAILED test_add: add(2, 2) returned {add(2, 2)}')\n    sys.exit(1)\n")
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
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "execute.md").write_text("---\ndescription: execute\n---\n\n# Execute\n\nFix.\n")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "check_calc.py").write_text(CHECK)
    check = f"{shlex.quote(sys.executable)} check_calc.py"
    (root / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0",
        "pipelines": {"main": [{"name": "execute", "workflow": "execute.md", "checks": [check]}]}}))
    model = Model(root / "calc.py")
    with fake.FakeAnthropic(responder=model) as server:
        env = claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary)
        env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})

        def specd(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], env=env, cwd=root,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600, check=False)

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
