"""Typed outputs on the model backends, through the real CLI against the fake Messages API.

The anthropic agent is held to the schema by its ``complete_step`` tool; the real Claude Code CLI by
``--json-schema`` (it builds its StructuredOutput tool from it). Either way specd validates the output
again, keeps it, fills the execute step's text with it and skips the docs step on it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from claude_cli import claude_binary, claude_env, prompt_text

OUTPUT = {"type": "object", "required": ["files", "docs"],
          "properties": {"files": {"type": "array", "items": {"type": "string"}}, "docs": {"type": "boolean"}}}
HEADER = re.compile(r"# specd (step|hook): (\S+) \(pipeline")
PRICE = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}}


def project(root: Path, agent: dict[str, Any]) -> None:
    workflows = root / ".specd" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "plan.md").write_text("# Plan\n\nList the files to change.\n")
    execute = "# Execute\n\nChange these files: {{ steps.plan.output.files | join(', ') }}\n"
    (workflows / "execute.md").write_text(execute)
    (workflows / "docs.md").write_text("# Docs\n\nUpdate the docs.\n")
    pipeline = {"schema_version": "1.0", "mode": "auto", "agent": agent, "pipelines": {"main": [
        {"name": "plan", "workflow": "plan.md", "output": OUTPUT},
        {"name": "execute", "workflow": "execute.md"},
        {"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"}]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))


def specd(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], env=env, cwd=root,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300, check=False)


def history(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    return list(json.loads(specd(root, env, "status", "t", "--json").stdout)["history"])


def test_anthropic_complete_step_carries_the_schema_and_a_refusal_goes_back(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    project(root, {"backend": "anthropic", "pricing": PRICE})
    script = [fake.complete("done", "planned", output={"files": "src/a.py", "docs": False}),
              fake.complete("done", "planned again", output={"files": ["src/a.py"], "docs": False}),
              fake.complete("done", "executed")]
    with fake.FakeAnthropic(script) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-OUT123", "ANTHROPIC_BASE_URL": server.url,
               "NO_COLOR": "1", "COLUMNS": "200"}
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        assert specd(root, env, "new", "t").returncode == 0
        run = specd(root, env, "continue", "t", "--auto", "--agent", "anthropic")
        bodies = server.bodies

    assert run.returncode == 0, run.stdout + run.stderr
    assert len(bodies) == 3  # plan twice, execute once; docs was skipped
    complete = next(t for t in bodies[0]["tools"] if t["name"] == "complete_step")
    assert complete["input_schema"]["properties"]["output"]["properties"] == OUTPUT["properties"]
    assert "output" in complete["input_schema"]["required"]
    retry = json.dumps(bodies[1]["messages"])
    assert "output.files: 'src/a.py' is not of type 'array'" in retry
    execute = json.dumps(bodies[2]["messages"])
    assert "Change these files: src/a.py" in execute
    plain = next(t for t in bodies[2]["tools"] if t["name"] == "complete_step")  # only the plan step's tool grew
    assert "output" not in plain["input_schema"]["properties"]
    rows = history(root, env)
    assert [(r["step"], r["kind"], r["outcome"]) for r in rows] == [
        ("plan", "attempt", "invalid_output"), ("plan", "step", "done"), ("execute", "step", "done"),
        ("docs", "step", "skipped")]
    assert rows[1]["output"] == {"files": ["src/a.py"], "docs": False}


class Model:
    """The fake model behind Claude Code: the plan step's structured output carries the files."""

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}
        self.schemas: dict[str, Any] = {}

    def __call__(self, body: dict[str, Any]) -> fake.Reply:
        found = HEADER.findall(prompt_text(body))
        if not found:
            return fake.message("ok")
        step = found[-1][1]
        self.prompts[step] = prompt_text(body)
        tool = next((t for t in body.get("tools", []) if t.get("name") == "StructuredOutput"), None)
        self.schemas[step] = tool["input_schema"] if tool else None
        extra = {"output": {"files": ["src/a.py", "src/b.py"], "docs": False}} if step == "plan" else {}
        return fake.message(fake.tool("StructuredOutput", outcome="done", summary=f"{step} done", **extra))


def test_claude_code_gets_the_schema_through_json_schema(tmp_path: Path) -> None:
    binary = claude_binary()
    root = tmp_path / "proj"
    project(root, {"backend": "claude_code"})
    model = Model()
    with fake.FakeAnthropic(responder=model) as server:
        env = claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary)
        env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
        assert specd(root, env, "new", "t").returncode == 0
        run = specd(root, env, "continue", "t", "--auto", "--agent", "claude_code")

        assert run.returncode == 0, run.stdout + run.stderr
        rows = history(root, env)
    assert sorted(model.prompts) == ["execute", "plan"]
    # One StructuredOutput tool for both steps (so the cached prefix holds): the plan's schema is in its prompt,
    # and specd checks the output against it after.
    assert model.schemas["plan"] == model.schemas["execute"]
    assert "output" not in model.schemas["plan"]["required"]
    assert json.dumps(OUTPUT, sort_keys=True) in model.prompts["plan"]
    assert "returns an object" not in model.prompts["execute"]
    assert "Change these files: src/a.py, src/b.py" in model.prompts["execute"]
    assert [(r["step"], r["outcome"]) for r in rows if r["kind"] == "step"] == [
        ("plan", "done"), ("execute", "done"), ("docs", "skipped")]
    assert rows[0]["output"] == {"files": ["src/a.py", "src/b.py"], "docs": False}
