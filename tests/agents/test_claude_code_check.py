"""Choosing `--agent claude_code` without a usable CLI: exit 2 and the fix, before any step runs.

These need no node: the "claude" binaries here are small scripts that print
a version, so they run wherever the rest of the suite runs.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from specd.agents.claude_code.check import check_credentials
from specd.errors import ConfigError
from specd.state.store import StateStore


def fake_claude(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "claude"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def task(run_cli: Any, make_project: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    for name in ("SPECD_CLAUDE_BIN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                 "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = make_project("cc")
    assert run_cli("--project", str(project.root), "new", "t", "--description", "Add CSV export").code == 0
    return project


def cont(run_cli: Any, project: Any, agent: str = "claude_code") -> Any:
    return run_cli("--project", str(project.root), "continue", "t", "--auto", "--agent", agent)


def test_no_claude_on_path_is_exit_2_with_an_install_hint(run_cli: Any, task: Any,
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    result = cont(run_cli, task)
    assert result.code == 2
    assert "`claude` is not on PATH" in result.err
    assert "npm install -g @anthropic-ai/claude-code" in result.err
    assert "Traceback" not in result.err
    assert StateStore(task.root / ".specd" / "tasks" / "t", "t").load() is None  # refused before a run began


def test_the_model_after_the_colon_is_accepted(run_cli: Any, task: Any, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert "`claude` is not on PATH" in cont(run_cli, task, "claude_code:claude-sonnet-4-5").err


def test_a_bad_specd_claude_bin_names_the_variable(run_cli: Any, task: Any, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("SPECD_CLAUDE_BIN", str(tmp_path / "no-such-claude"))
    result = cont(run_cli, task)
    assert result.code == 2
    assert "SPECD_CLAUDE_BIN=" in result.err
    assert "no-such-claude" in result.err


def test_a_too_old_claude_is_exit_2_with_the_update_command(run_cli: Any, task: Any,
                                                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPECD_CLAUDE_BIN", str(fake_claude(tmp_path / "old", "1.0.128")))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    result = cont(run_cli, task)
    assert result.code == 2
    assert "Claude Code 1.0.128" in result.err
    assert "too old" in result.err
    assert "2.1.0 or newer" in result.err
    assert "npm install -g @anthropic-ai/claude-code" in result.err


def test_no_credentials_at_all_is_exit_2_with_the_login_hint(run_cli: Any, task: Any,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("SPECD_CLAUDE_BIN", str(fake_claude(tmp_path / "new", "2.1.197")))
    result = cont(run_cli, task)
    assert result.code == 2
    assert "no Claude Code credentials" in result.err
    assert "/login" in result.err
    assert "ANTHROPIC_API_KEY" in result.err


@pytest.mark.parametrize(("relpath", "text"), [
    (".claude/.credentials.json", "{}"),
    (".claude.json", '{"oauthAccount": {"emailAddress": "a@b.c"}}'),
    (".claude/settings.json", '{"apiKeyHelper": "~/bin/key"}'),
])
def test_a_login_on_disk_is_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relpath: str,
                                   text: str) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    home = tmp_path / "home"
    (home / relpath).parent.mkdir(parents=True, exist_ok=True)
    (home / relpath).write_text(text)
    check_credentials({"HOME": str(home)})  # does not raise
    with pytest.raises(ConfigError, match="no Claude Code credentials"):
        check_credentials({"HOME": str(tmp_path / "elsewhere")})


def test_an_auth_token_is_enough(tmp_path: Path) -> None:
    check_credentials({"HOME": str(tmp_path), "ANTHROPIC_AUTH_TOKEN": "x" * 20})
    assert list(tmp_path.iterdir()) == []  # nothing was created looking for it


def test_the_pipeline_file_takes_the_claude_code_keys(run_cli: Any, make_project: Any) -> None:
    project = make_project("keys")
    agent = {"backend": "claude_code", "model": "sonnet", "max_turns": 9, "permission_mode": "default",
             "allowed_tools": ["Read", "Bash(pytest:*)"], "disallowed_tools": [], "extra_args": ["--add-dir", "x"]}
    project.pipeline({"schema_version": "1.0", "agent": agent,
                      "pipelines": {"main": [{"name": "a", "workflow": "execute.md"}]}})
    ok = run_cli("--project", str(project.root), "pipeline", "validate")
    assert ok.code == 0, ok.err
    assert "unknown" not in ok.err.lower()

    project.pipeline({"schema_version": "1.0", "agent": {**agent, "permission_mode": "yolo"},
                      "pipelines": {"main": [{"name": "a", "workflow": "execute.md"}]}})
    bad = run_cli("--project", str(project.root), "pipeline", "validate")
    assert bad.code == 2
    assert "agent.permission_mode" in bad.err
