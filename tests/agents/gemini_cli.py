"""Finding the real Gemini CLI for tests, and the environment that points it at the fake Gemini API.

Where the CLI is missing the tests skip, except under CI (``CI`` set), where a missing CLI is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DUMMY_KEY = "AIzaSyTEST-gemini-0123456789abcdefghijk"
HEADER = re.compile(r"# specd (step|hook): (\S+) \(pipeline (\S+), (?:phase (\S+)|no phase)\)")
# Variables of the machine running the tests that would change how the CLI signs in, where it keeps its
# state, or which model and sandbox it uses.
_SCRUB = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
          "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "GEMINI_CLI_HOME", "GEMINI_MODEL",
          "GEMINI_SANDBOX", "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_SYSTEM_SETTINGS_PATH")


def gemini_binary() -> str:
    candidates = [os.environ.get("SPECD_GEMINI_BIN"), shutil.which("gemini"),
                  str(REPO / ".ci" / "node" / "node_modules" / ".bin" / "gemini")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    message = "the Gemini CLI is not installed (set SPECD_GEMINI_BIN or put `gemini` on PATH)"
    if os.environ.get("CI"):
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


def gemini_env(base: Mapping[str, str], *, url: str, home: Path, binary: str) -> dict[str, str]:
    """The Gemini CLI against the fake server: a throwaway HOME and a dummy key."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in base.items() if k not in _SCRUB}
    env.update({"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": DUMMY_KEY,
                "SPECD_GEMINI_BIN": binary, "NO_COLOR": "1", "TERM": "dumb"})
    return env


def prompt_text(body: Mapping[str, Any]) -> str:
    """Every text part of every user turn of a request, joined (the CLI adds its own session context)."""
    parts: list[str] = []
    for content in body.get("contents", []):
        if content.get("role") == "user":
            parts += [str(part.get("text", "")) for part in content.get("parts", []) if isinstance(part, dict)]
    return "\n".join(parts)


def last_header(body: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """(kind, step, phase) of the newest specd prompt in a request."""
    kind, step, _, phase = HEADER.findall(prompt_text(body))[-1]
    return kind, step, phase or None


def events_of(transcript: Path, kind: str) -> list[dict[str, Any]]:
    """The CLI's stream-json events of one type, as specd kept them in the transcript."""
    rows = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("type") == kind]
