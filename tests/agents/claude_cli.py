"""Finding the real Claude Code CLI for tests, and the environment that points it at the fake server.

Only the Claude Code tests need node. Where the CLI is missing they skip,
except under CI (``CI`` set), where a missing CLI is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import forked
import pytest

REPO = Path(__file__).resolve().parents[2]
DUMMY_KEY = "sk-ant-test-CLAUDECODE-0123456789"
# Variables of the machine running the tests that would change what Claude Code does or where it logs in.
_SCRUB = ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "ANTHROPIC_MODEL",
          "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY", "CLAUDECODE")


def claude_binary() -> str:
    candidates = [os.environ.get("SPECD_CLAUDE_BIN"), shutil.which("claude"),
                  str(REPO / ".ci" / "node" / "node_modules" / ".bin" / "claude")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    message = "the Claude Code CLI is not installed (set SPECD_CLAUDE_BIN or put `claude` on PATH)"
    if os.environ.get("CI"):
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


def claude_env(base: Mapping[str, str], *, url: str, home: Path, binary: str) -> dict[str, str]:
    """Claude Code against the fake server: a throwaway HOME, a dummy key, no telemetry or update checks."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in base.items() if k not in _SCRUB}
    env.update({"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": DUMMY_KEY,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "SPECD_CLAUDE_BIN": binary})
    return env


def result_events(transcript: Path) -> list[dict[str, Any]]:
    """The `result` events Claude Code streamed, as specd kept them in the transcript."""
    events = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [event for event in events if event.get("type") == "result"]


def prompt_text(body: Mapping[str, Any]) -> str:
    """Every text block of every user message of a request, joined (Claude Code adds its own reminders)."""
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts += [str(block.get("text", "")) for block in blocks if isinstance(block, dict)]
    return "\n".join(parts)


def schema_outcomes(body: Mapping[str, Any]) -> list[str]:
    """The outcomes specd allowed, read from the step's prompt: the StructuredOutput tool Claude Code builds from
    --json-schema is the same for every step (so its cached prefix is too), the outcome a plain string."""
    for line in prompt_text(body).splitlines():
        if line.startswith("- Allowed outcomes: "):
            return line.removeprefix("- Allowed outcomes: ").split(", ")
    return []


def claude_specd(root: Path, env: Mapping[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`specd --project ROOT ARGS` with Claude Code's test environment: a step of the real CLI may take long."""
    def specd(*args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(root), *args], env=dict(env), cwd=root,
                          timeout=600)

    return specd
