"""Acceptance (issue 30): an agent per step. Claude Code executes, the anthropic agent reviews.

One run of `specd continue` through the real CLI: the execute step names `claude_code` in its own agent
block, the review step `anthropic`, and both backends talk to the same fake Messages API. The fake model
tells them apart by the tool each brings for its outcome (Claude Code's StructuredOutput, specd's
complete_step), so each step is seen to reach the backend its block names, and each history row names
that backend with its own cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from claude_cli import claude_binary, claude_env

from specd.state.store import StateStore

WORK = "---\ndescription: {name}\n{extra}---\n\n# {name}\n\nDo the {name} work.\n"


class Model:
    """Answers each request as the backend that sent it expects, and notes which backend that was."""

    def __init__(self) -> None:
        self.backends: list[str] = []

    def __call__(self, body: dict[str, Any]) -> fake.Reply:
        tools = {tool.get("name") for tool in body.get("tools", [])}
        if "StructuredOutput" in tools:
            self.backends.append("claude_code")
            return fake.message(fake.text("executing"), fake.tool("StructuredOutput", outcome="done",
                                                                  summary="executed"))
        self.backends.append("anthropic")
        return fake.message(fake.tool("complete_step", outcome="approve", summary="reviewed"))


def test_execute_on_claude_code_review_on_anthropic(tmp_path: Path) -> None:
    binary = claude_binary()
    root = tmp_path / "proj"
    workflows = root / ".specd" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "execute.md").write_text(WORK.format(name="execute", extra=""))
    (workflows / "review.md").write_text(WORK.format(name="review", extra="outcomes: [approve, revise]\n"))
    pipeline = {"schema_version": "1.0", "mode": "auto", "agent": {"backend": "command", "command": "false"},
                "pipelines": {"main": [
                    {"name": "execute", "workflow": "execute.md", "agent": {"backend": "claude_code"}},
                    {"name": "review", "workflow": "review.md", "agent": {"backend": "anthropic",
                                                                          "model": "claude-review-small"}},
                ]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    model = Model()
    with fake.FakeAnthropic(responder=model) as server:
        env = {**claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary),
               "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}

        def specd(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], env=env,
                                  cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
                                  check=False)

        assert specd("new", "t", "--description", "two backends").returncode == 0
        shown = json.loads(specd("pipeline", "show", "--json").stdout)
        run = specd("continue", "t")
        assert run.returncode == 0, run.stdout + run.stderr
        review_models = [body.get("model") for body in server.bodies
                         if "complete_step" in {tool.get("name") for tool in body.get("tools", [])}]

    # `pipeline show` says which backend each step runs on.
    steps = {step["name"]: step for step in shown["pipelines"]["main"]}
    assert steps["execute"]["backend"].startswith("claude_code")
    assert steps["review"]["backend"].startswith("anthropic")
    # The pipeline's own backend (a command that fails) never ran: each step went to its own backend.
    assert model.backends[0] == "claude_code"
    assert model.backends[-1] == "anthropic"
    assert set(review_models) == {"claude-review-small"}  # the step block's model reached the API
    state = StateStore(root / ".specd" / "tasks" / "t", "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    rows = [row for row in state.history if row["kind"] == "step"]
    assert [(row["step"], row["backend"], row["outcome"]) for row in rows] == [
        ("execute", "claude_code", "done"), ("review", "anthropic", "approve")]
    assert all(row["usage"]["cost_usd"] > 0 for row in rows)  # each with its own cost
