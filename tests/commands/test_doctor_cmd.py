"""`specd doctor` through the real CLI, in real git repositories with controlled git config."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MARKER = "sk-ant-doctor-marker-0123456789"
CHECKS = {"git", "git repository", "git identity", "work tree", "disk", "sandbox", "children", "pipeline",
          "agent: command",
          "agent: anthropic", "agent: claude_code", "agent: codex", "agent: gemini", "agent: openai", "agent: scripted"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def env_for(tmp_path: Path, *, identity: bool, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Doc Tor\n\temail = doc@example.com\n" if identity else "",
                         encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GIT_", "SPECD_", "OPENAI_"))}
    # The real Gemini CLI takes seconds to say its version; test_doctor_backends.py covers the agent CLIs.
    gemini = home / "gemini"
    gemini.write_text("#!/bin/sh\necho 0.0.1\n", encoding="utf-8")
    gemini.chmod(0o755)
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(gitconfig) if identity else "/dev/null",
               ANTHROPIC_API_KEY=MARKER, SPECD_GEMINI_BIN=str(gemini), **extra)
    return env


def doctor(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specd", "doctor", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    data = json.loads(result.stdout)
    return {c["name"]: c for c in data["checks"]}


def test_fresh_repository_reports_every_check_and_exits_0(repo: Path, tmp_path: Path) -> None:
    env = env_for(tmp_path, identity=True)
    result = doctor(repo, env)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for name in CHECKS:  # one line per check, led by its level
        assert any(line.split("  ")[0].strip() in ("ok", "warn") and f"  {name}  " in line for line in lines), name
    assert "ready to run" in result.stdout
    found = checks(doctor(repo, env, "--json"))
    assert set(found) == CHECKS
    assert found["git identity"]["detail"] == "Doc Tor <doc@example.com>"
    assert found["agent: anthropic"]["level"] == "ok"
    assert "ANTHROPIC_API_KEY is set" in found["agent: anthropic"]["detail"]
    assert MARKER not in result.stdout + result.stderr + json.dumps(found)  # presence, never the value


def test_no_git_identity_fails(repo: Path, tmp_path: Path) -> None:
    result = doctor(repo, env_for(tmp_path, identity=False), "--json")
    assert result.returncode == 1
    found = checks(result)
    assert found["git identity"]["level"] == "FAIL"
    assert "git config --global user.email" in found["git identity"]["fix"]
    assert json.loads(result.stdout)["ok"] is False
    human = doctor(repo, env_for(tmp_path, identity=False))
    assert human.returncode == 1
    assert any(line.startswith("FAIL") and "git identity" in line for line in human.stdout.splitlines())


def test_broken_pipeline_file_fails_naming_it(repo: Path, tmp_path: Path) -> None:
    broken = repo / ".specd" / "pipeline.json"
    broken.parent.mkdir()
    broken.write_text('{"schema_version": "1.0", "pipelines": {"main": [', encoding="utf-8")
    result = doctor(repo, env_for(tmp_path, identity=True), "--json")
    assert result.returncode == 1
    found = checks(result)
    assert found["pipeline"]["level"] == "FAIL"
    assert str(broken) in found["pipeline"]["detail"]
    assert "Traceback" not in result.stderr


def test_dirty_tree_is_counted_outside_specd_and_only_warned(repo: Path, tmp_path: Path) -> None:
    (repo / "notes.txt").write_text("mine", encoding="utf-8")
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (repo / ".specd").mkdir()
    (repo / ".specd" / "config.json").write_text("{}", encoding="utf-8")
    result = doctor(repo, env_for(tmp_path, identity=True), "--json")
    assert result.returncode == 0, result.stdout
    tree = checks(result)["work tree"]
    assert tree["level"] == "warn"
    assert tree["detail"].startswith("2 uncommitted path(s) outside .specd/")


def test_missing_bwrap_and_claude_are_warnings_and_a_configured_missing_backend_fails(repo: Path,
                                                                                     tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # a PATH holding git and nothing else
    bin_dir.mkdir()
    git = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    (bin_dir / "git").symlink_to(git)
    env = env_for(tmp_path, identity=True, PATH=str(bin_dir))
    found = checks(doctor(repo, env, "--json"))
    assert found["sandbox"]["level"] == "warn"
    assert found["sandbox"]["detail"] == ("jail: none — bwrap is not installed; commands run without a shell, "
                                          "leftover processes are killed after each step")
    assert found["agent: claude_code"]["level"] == "warn"
    (repo / ".specd").mkdir()
    (repo / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "agent": {"backend": "claude_code"},
        "pipelines": {"main": [{"name": "discuss", "workflow": "discuss.md"}]}}), encoding="utf-8")
    result = doctor(repo, env, "--json")
    assert result.returncode == 1
    assert checks(result)["agent: claude_code"]["level"] == "FAIL"


def test_claude_code_version_comes_from_the_binary(repo: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n", encoding="utf-8")
    fake.chmod(0o755)
    found = checks(doctor(repo, env_for(tmp_path, identity=True, SPECD_CLAUDE_BIN=str(fake)), "--json"))
    assert found["agent: claude_code"]["level"] == "ok"
    assert "9.9.9 (Claude Code)" in found["agent: claude_code"]["detail"]


def test_doctor_names_the_jail_and_the_real_reason_it_is_not_usable(repo: Path, tmp_path: Path) -> None:
    found = checks(doctor(repo, env_for(tmp_path, identity=True, SPECD_BWRAP="/bin/false"), "--json"))
    assert found["sandbox"]["level"] == "warn"
    assert found["sandbox"]["detail"].startswith("jail: none — /bin/false is installed but cannot start a jail here: "
                                                 "exit status 1; ")
    if shutil.which("bwrap") or os.environ.get("CI"):
        ok = checks(doctor(repo, env_for(tmp_path, identity=True), "--json"))["sandbox"]
        assert ok["level"] == "ok", ok
        assert ok["detail"].startswith("jail: bubblewrap (user namespace, no capabilities)")


def test_doctor_reports_how_leftover_children_are_stopped(repo: Path, tmp_path: Path) -> None:
    no_jail = checks(doctor(repo, env_for(tmp_path, identity=True, SPECD_BWRAP="/bin/false"), "--json"))["children"]
    if sys.platform.startswith("linux"):
        assert no_jail["level"] == "ok"
        assert no_jail["detail"].startswith("subreaper+death signal: no jail (bubblewrap PID namespace)")
    else:
        assert no_jail["level"] == "warn"
        assert no_jail["detail"].startswith("psutil-only: no death signal")
    if shutil.which("bwrap") or os.environ.get("CI"):
        jailed = checks(doctor(repo, env_for(tmp_path, identity=True), "--json"))["children"]
        assert jailed == {**jailed, "level": "ok", "detail": "jail: the PID namespace takes every descendant "
                                                            "down with specd"}


def test_doctor_judges_only_the_agents_the_project_uses(repo: Path, tmp_path: Path) -> None:
    """No API key: a new project (the default agent is anthropic) fails; once its task runs with
    `--agent 'cmd:...'` (remembered by the run) anthropic is only a warning and the project is ready."""
    env = env_for(tmp_path, identity=True)
    del env["ANTHROPIC_API_KEY"]
    (repo / ".specd" / "workflows").mkdir(parents=True)
    (repo / ".specd" / "workflows" / "w.md").write_text("# W\n\nDo it.\n", encoding="utf-8")
    (repo / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "mode": "auto", "pipelines": {"main": [{"name": "a", "workflow": "w.md"}]}}),
        encoding="utf-8")
    fresh = doctor(repo, env, "--json")
    assert fresh.returncode == 1
    assert checks(fresh)["agent: anthropic"]["level"] == "FAIL"
    assert "the default agent" in checks(fresh)["agent: anthropic"]["detail"]
    made = subprocess.run([sys.executable, "-m", "specd", "new", "t", "--description", "d"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    ran = subprocess.run([sys.executable, "-m", "specd", "continue", "t", "--agent", "cmd:cat > /dev/null"],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = doctor(repo, env, "--json")
    found = checks(result)
    assert result.returncode == 0, result.stdout
    assert found["agent: anthropic"]["level"] == "warn"
    assert "not used by this project" in found["agent: anthropic"]["detail"]
    assert found["agent: command"]["detail"].endswith("used by task t")


def test_a_hook_whose_frontmatter_does_not_parse_fails_the_pipeline_check(repo: Path, tmp_path: Path) -> None:
    """Found by hand: doctor said "ready to run" while the first run stopped at the hook, exit 2."""
    hook = repo / ".specd" / "hooks" / "pre-discuss.md"
    hook.parent.mkdir(parents=True)
    hook.write_text("---\nrun: [\n---\nbody\n", encoding="utf-8")
    result = doctor(repo, env_for(tmp_path, identity=True), "--json")
    assert result.returncode == 1
    found = checks(result)["pipeline"]
    assert found["level"] == "FAIL"
    assert f"{hook}:3: invalid YAML frontmatter" in found["detail"]
    hook.write_text("---\nrun: inline\n---\nbody\n", encoding="utf-8")
    mended = checks(doctor(repo, env_for(tmp_path, identity=True), "--json"))["pipeline"]
    assert mended["level"] == "ok"
    assert "workflow files read" in mended["detail"]


def test_doctor_names_the_environments_the_jail_holds_read_only(repo: Path, tmp_path: Path) -> None:
    assert "environments" not in checks(doctor(repo, env_for(tmp_path, identity=True), "--json"))  # none: no line
    (repo / ".venv").mkdir()
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (repo / "web" / "node_modules").mkdir(parents=True)
    if not (shutil.which("bwrap") or os.environ.get("CI")):
        pytest.skip("bubblewrap is not available on this machine")
    found = checks(doctor(repo, env_for(tmp_path, identity=True), "--json"))["environments"]
    assert found["level"] == "ok"
    assert found["detail"].startswith("read-only in the jail: .venv, web/node_modules (git ignores them")
    let = checks(doctor(repo, env_for(tmp_path, identity=True, SPECD_JAIL_WRITE=".venv"), "--json"))["environments"]
    assert let["detail"].startswith("read-only in the jail: web/node_modules; writable (SPECD_JAIL_WRITE): .venv (")
    none = checks(doctor(repo, env_for(tmp_path, identity=True, SPECD_BWRAP="/bin/false"), "--json"))
    assert "environments" not in none  # no jail: nothing is read-only
