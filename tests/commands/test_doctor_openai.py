"""`specd doctor`'s `agent: openai` check through the real CLI: the SDK, the key by presence, a local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

VALUE = "sk-test-doctor-openai-0123456789"


def doctor(root: Path, agent: dict[str, Any], **env: str) -> dict[str, Any]:
    (root / ".specd" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# W\n\nDo it.\n", encoding="utf-8")
    (root / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "mode": "auto", "agent": agent,
        "pipelines": {"main": [{"name": "a", "workflow": "w.md"}]}}), encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPECD_"))}
    gemini = root / ".git" / "gemini"  # the real Gemini CLI takes seconds to say its version: a stand-in
    gemini.write_text("#!/bin/sh\necho 0.0.1\n", encoding="utf-8")
    gemini.chmod(0o755)
    clean["SPECD_GEMINI_BIN"] = str(gemini)
    result = subprocess.run([sys.executable, "-m", "specd", "doctor", "--json"], cwd=root, env={**clean, **env},
                            capture_output=True, text=True, timeout=120, check=False)
    assert VALUE not in result.stdout + result.stderr  # a key is reported by presence, never by value
    found: dict[str, Any] = {c["name"]: c for c in json.loads(result.stdout)["checks"]}["agent: openai"]
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_a_local_server_needs_no_key_and_doctor_says_so(root: Path) -> None:
    found = doctor(root, {"backend": "openai", "model": "qwen", "base_url": "http://127.0.0.1:11434/v1"})
    assert found["level"] == "ok"
    assert "no OPENAI_API_KEY, which a local server does not need" in found["detail"]
    assert "the pipeline's agent" in found["detail"]


def test_openai_itself_without_the_key_fails_naming_the_variable_and_the_fix(root: Path) -> None:
    found = doctor(root, {"backend": "openai", "model": "gpt-5-mini", "api_key_env": "MY_LLM_KEY"})
    assert found["level"] == "FAIL"
    assert "no MY_LLM_KEY in the environment" in found["detail"]
    assert "export MY_LLM_KEY=" in found["fix"]


def test_the_key_named_by_api_key_env_counts_when_present(root: Path) -> None:
    found = doctor(root, {"backend": "openai", "model": "gpt-5-mini", "api_key_env": "MY_LLM_KEY"},
                   MY_LLM_KEY=VALUE)
    assert found["level"] == "ok"
    assert "MY_LLM_KEY is set" in found["detail"]
    assert found["detail"].startswith("SDK 2.")


def test_a_project_that_does_not_use_openai_only_warns_without_a_key(root: Path) -> None:
    found = doctor(root, {"backend": "command", "command": "cat > /dev/null"})
    assert found["level"] == "warn"
    assert "not used by this project" in found["detail"]
