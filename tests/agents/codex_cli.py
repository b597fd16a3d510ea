"""Finding the real Codex CLI for tests, and the environment that points it at the fake Responses API.

Where the CLI is missing the tests skip, except under CI (``CI`` set), where a missing CLI is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DUMMY_KEY = "sk-test-CODEX-0123456789abcdef"
MODEL = "gpt-5-mini"  # in specd's price table, so a step has a cost
# Variables of the machine running the tests that would change where Codex looks or whom it talks to.
_SCRUB = ("CODEX_HOME", "OPENAI_BASE_URL", "CODEX_API_KEY", "OPENAI_API_KEY", "SPECD_CODEX_BIN")


def codex_binary() -> str:
    candidates = [os.environ.get("SPECD_CODEX_BIN"), shutil.which("codex"),
                  str(REPO / ".ci" / "node" / "node_modules" / ".bin" / "codex"),
                  "/work/main/.ci/node/node_modules/.bin/codex"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    message = "the Codex CLI is not installed (set SPECD_CODEX_BIN or put `codex` on PATH)"
    if os.environ.get("CI"):
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


def codex_env(base: Mapping[str, str], *, home: Path, binary: str) -> dict[str, str]:
    """A throwaway HOME (so no ~/.codex of the machine is read), a dummy key, the binary to use."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in base.items() if k not in _SCRUB}
    env.update({"HOME": str(home), "OPENAI_API_KEY": DUMMY_KEY, "SPECD_CODEX_BIN": binary})
    return env


def agent_block(url: str, **more: Any) -> dict[str, Any]:
    return {"backend": "codex", "model": MODEL, "base_url": url, **more}


def events_of(transcript: Path) -> list[dict[str, Any]]:
    """Codex's JSON events as specd kept them in the transcript (its own header line left out)."""
    rows = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("type") not in ("specd", "stderr")]
