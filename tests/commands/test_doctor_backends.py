"""`specd doctor` knows every backend (issue 32): each CLI and its version, each SDK, each key by presence.

Fake CLIs are small scripts on a PATH of the test's own (``claude``, ``codex``, ``gemini`` printing a
version, or failing); keys are set or unset in the environment. Every backend is listed; only the ones the
project uses (the pipeline's agent, a step's own agent block) can fail the run of doctor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from specd.agents.needs import survey
from specd.resources import builtin_dir

KEY = "sk-doctor-backends-VALUE-0123456789"
ORDER = ["anthropic", "claude_code", "codex", "gemini", "openai", "command", "scripted"]
VERSIONS = {"claude": "2.1.197 (Claude Code)", "codex": "codex-cli 0.169.0", "gemini": "0.61.0"}


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A PATH holding git and the three agent CLIs, each a script that prints its version."""
    folder = tmp_path / "bin"
    folder.mkdir()
    git = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    (folder / "git").symlink_to(git)
    for name, version in VERSIONS.items():
        script(folder / name, f"echo '{version}'")
    return folder


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def env_for(tmp_path: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Doc Tor\n\temail = doc@example.com\n", encoding="utf-8")
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE", "CODEX", "SPECD_", "GIT_"))}
    return {**keep, "PATH": str(bin_dir), "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(gitconfig), **extra}


def doctor(root: Path, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "specd", "doctor", "--json"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert KEY not in done.stdout + done.stderr  # presence, never the value
    assert "Traceback" not in done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    schema = json.loads((builtin_dir("schemas") / "doctor.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    return done.returncode, data


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["backend"]: row for row in data["backends"]}


def pipeline(root: Path, agent: dict[str, Any], step: dict[str, Any] | None = None) -> None:
    (root / ".specd" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# W\n\nDo it.\n", encoding="utf-8")
    (root / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "mode": "auto", "agent": agent,
        "pipelines": {"main": [{"name": "a", "workflow": "w.md", **(step or {})}]}}), encoding="utf-8")


def test_every_backend_is_listed_with_its_cli_version_and_its_keys(repo: Path, tmp_path: Path,
                                                                    bin_dir: Path) -> None:
    code, data = doctor(repo, env_for(tmp_path, bin_dir))
    rows = by_name(data)
    assert [row["backend"] for row in data["backends"]] == ORDER
    for backend, cli in (("claude_code", "claude"), ("codex", "codex"), ("gemini", "gemini")):
        assert rows[backend]["cli"] == {"name": cli, "path": str(bin_dir / cli), "version": VERSIONS[cli]}
        assert VERSIONS[cli] in rows[backend]["detail"]
    assert rows["openai"]["sdk"]["name"] == "openai"
    assert rows["openai"]["sdk"]["version"].startswith("2.")
    assert rows["gemini"]["keys"] == {"GEMINI_API_KEY": False, "GOOGLE_API_KEY": False}
    assert rows["codex"]["keys"] == {"OPENAI_API_KEY": False}
    # The agent CLIs can be signed in by themselves; the API backends cannot run without a key.
    assert rows["gemini"]["ready"]
    assert rows["claude_code"]["ready"]
    assert "must be signed in by itself" in rows["gemini"]["detail"]
    assert not rows["codex"]["ready"]
    assert not rows["anthropic"]["ready"]
    # The built-in pipeline runs on the default, anthropic: it alone is judged.
    assert code == 1
    levels = {c["name"]: c["level"] for c in data["checks"]}
    assert levels["agent: anthropic"] == "FAIL"
    assert levels["agent: codex"] == levels["agent: openai"] == "warn"
    assert rows["anthropic"]["used_by"].startswith("the default agent")
    assert rows["codex"]["used_by"] is None


def test_keys_are_reported_by_presence_and_unused_backends_never_fail(repo: Path, tmp_path: Path,
                                                                       bin_dir: Path) -> None:
    env = env_for(tmp_path, bin_dir, ANTHROPIC_API_KEY=KEY, GOOGLE_API_KEY=KEY)
    code, data = doctor(repo, env)
    rows = by_name(data)
    assert code == 0, data
    assert data["ok"] is True
    assert rows["anthropic"]["keys"] == {"ANTHROPIC_API_KEY": True, "ANTHROPIC_AUTH_TOKEN": False}
    assert rows["gemini"]["keys"] == {"GEMINI_API_KEY": False, "GOOGLE_API_KEY": True}
    assert "GOOGLE_API_KEY is set" in rows["gemini"]["detail"]
    assert not rows["codex"]["ready"]  # no OPENAI_API_KEY, but nothing here uses codex: a warning only


def test_a_missing_or_broken_cli_says_which_and_how_to_point_at_it(repo: Path, tmp_path: Path,
                                                                    bin_dir: Path) -> None:
    (bin_dir / "gemini").unlink()
    broken = script(tmp_path / "broken-codex", "echo 'cannot start' >&2; exit 1")
    code, data = doctor(repo, env_for(tmp_path, bin_dir, SPECD_CODEX_BIN=str(broken), ANTHROPIC_API_KEY=KEY))
    rows = by_name(data)
    assert code == 0  # neither is used
    assert rows["gemini"]["cli"] == {"name": "gemini", "path": None, "version": None}
    assert rows["gemini"]["detail"] == "`gemini` is not on PATH"
    assert "SPECD_GEMINI_BIN" in rows["gemini"]["fix"]
    assert rows["codex"]["cli"] == {"name": "codex", "path": str(broken), "version": None}
    assert rows["codex"]["detail"] == f"{broken} does not run (`--version` failed)"


def test_a_backend_a_step_names_is_judged_and_says_so(repo: Path, tmp_path: Path, bin_dir: Path) -> None:
    pipeline(repo, {"backend": "command", "command": "true"}, {"agent": {"backend": "claude_code"}})
    (bin_dir / "claude").unlink()
    code, data = doctor(repo, env_for(tmp_path, bin_dir))
    assert code == 1
    claude = by_name(data)["claude_code"]
    assert claude["used_by"] == "used by step a"
    assert {c["name"]: c["level"] for c in data["checks"]}["agent: claude_code"] == "FAIL"
    assert "anthropic" not in {c["name"].removeprefix("agent: ") for c in data["checks"] if c["level"] == "FAIL"}

    script(bin_dir / "claude", f"echo '{VERSIONS['claude']}'")
    code, data = doctor(repo, env_for(tmp_path, bin_dir))
    assert code == 0, data["checks"]


def test_codex_and_openai_follow_their_agent_block_for_the_key_and_the_server(bin_dir: Path) -> None:
    env = {"PATH": str(bin_dir)}
    local = {row.backend: row for row in survey({"backend": "codex", "base_url": "http://127.0.0.1:9/v1"}, env)}
    assert local["codex"].ready
    assert "which a local server does not need" in local["codex"].detail
    remote = {row.backend: row for row in survey({"backend": "codex", "base_url": "https://llm.example/v1"}, env)}
    assert not remote["codex"].ready
    named = {row.backend: row for row in survey({"backend": "codex", "api_key_env": "MY_KEY"}, {**env, "MY_KEY": KEY})}
    assert named["codex"].ready
    assert named["codex"].keys == {"MY_KEY": True}
    assert named["openai"].keys == {"OPENAI_API_KEY": False}  # another backend's block is not openai's
