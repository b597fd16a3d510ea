"""`checks:` with the anthropic agent against the fake Messages API: the failing check's output reaches the
model in the next attempt's prompt, and the model's fix makes the step done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from calc_kit import calc_project


def specd(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], capture_output=True,
                          text=True, env=env, cwd=root, timeout=120, stdin=subprocess.DEVNULL, check=False)


def said(body: dict[str, Any]) -> str:
    """Every text the request sends the model, tool results included."""
    return json.dumps(body["messages"])


def test_the_model_sees_the_failing_check_and_fixes_the_code(tmp_path: Path, server: Any) -> None:
    root = tmp_path / "proj"
    calc_project(root, {"backend": "anthropic"})
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-key", "ANTHROPIC_BASE_URL": server.url, "NO_COLOR": "1"}
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    assert specd(root, env, "new", "t").returncode == 0
    server.push(fake.complete("done", "looks fine"),  # attempt 1: claims done without fixing anything
                fake.message(fake.tool("edit_file", path="calc.py", old_string="a - b", new_string="a + b")),
                fake.complete("done", "fixed add"))

    run = specd(root, env, "continue", "t", "--auto", "--agent", "anthropic")

    assert run.returncode == 0, run.stderr
    bodies = server.bodies
    assert len(bodies) == 3
    assert "FAILED test_add" not in said(bodies[0])
    assert "FAILED test_add: add(2, 2) returned 0" in said(bodies[1])  # the check's output, to the model
    assert "attempt 2 of 3" in said(bodies[1])
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    status = json.loads(specd(root, env, "status", "t", "--json").stdout)
    assert [(h["kind"], h["outcome"]) for h in status["history"]] == [
        ("step", "done"), ("checks", "failed"), ("step", "done"), ("checks", "passed")]
    assert status["status"] == "COMPLETE"
