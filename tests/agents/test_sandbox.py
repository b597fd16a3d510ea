"""The sandbox: escapes and specd's own files come back as tool errors; nothing outside changes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.anthropic.sandbox import Refused, Sandbox, command_allowed, command_env

ESCAPES = ["../x", "/etc/passwd", "link-out/keep.txt", ".git/config", ".specd/tasks/t/.pipeline-state.json"]


def _fingerprint(*folders: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_reads_and_writes_outside_the_sandbox_are_tool_errors(project: Any, server: Any, make_agent: Any) -> None:
    (project.root / "link-out").symlink_to(project.outside)
    (project.root / "innocent.md").symlink_to(project.root / ".git" / "config")
    paths = [*ESCAPES, "innocent.md"]
    guarded = [project.outside, project.root / ".git", project.task_dir]
    before = _fingerprint(*guarded)
    passwd_before = Path("/etc/passwd").read_bytes() if Path("/etc/passwd").exists() else b""
    server.push(
        fake.message(*[fake.tool("read_file", path=p) for p in paths]),
        fake.message(*[fake.tool("write_file", path=p, content="pwned") for p in paths]),
        fake.message(*[fake.tool("edit_file", path=p, old_string="a", new_string="b") for p in paths]),
        fake.complete(),
    )
    make_agent().run(project.request())

    for body in server.bodies[1:4]:
        results = fake.tool_results(body)
        assert len(results) == len(paths)
        for path, result in zip(paths, results, strict=True):
            assert result["is_error"], path
            assert result["content"].startswith("refused:"), (path, result["content"])
    after = {k: v for k, v in _fingerprint(*guarded).items() if "/transcripts/" not in k and "PROJECT" not in k}
    assert after == {k: v for k, v in before.items() if "/transcripts/" not in k}
    assert not (project.root.parent / "x").exists()
    assert (project.outside / "keep.txt").read_text() == "untouched"
    if passwd_before:
        assert Path("/etc/passwd").read_bytes() == passwd_before


def test_list_and_search_never_show_protected_files(project: Any, server: Any, make_agent: Any) -> None:
    (project.root / "link-out").symlink_to(project.outside)
    server.push(
        fake.message(fake.tool("list_files", pattern="**/*"), fake.tool("search_files", regex="untouched|core|IN_"),
                     fake.tool("list_files", pattern="../*")),
        fake.complete(),
    )
    make_agent().run(project.request())
    listed, searched, escaped = fake.tool_results(server.bodies[1])
    assert ".pipeline-state" not in listed["content"]
    assert ".git" not in listed["content"]
    assert "keep.txt" not in listed["content"]
    assert "src/app.py" in listed["content"]
    assert searched["content"] == "no matches"
    assert escaped["is_error"]


@pytest.mark.parametrize(
    "path",
    ["../x", "/etc/passwd", ".git/config", ".git", "sub/../../x", ".specd/tasks/t/.pipeline-state.md",
     ".specd/tasks/t/events.jsonl", ".specd/tasks/t/transcripts/run/001-x.jsonl", ".specd/tasks/t/run.lock",
     ".specd/tasks/t/heartbeat", ""],
)
def test_sandbox_refuses(tmp_path: Path, path: str) -> None:
    with pytest.raises(Refused):
        Sandbox(tmp_path).resolve(path)


@pytest.mark.parametrize("path", ["a.txt", "src/../a.txt", ".specd/tasks/t/PLAN.md", ".specd/PROJECT.md"])
def test_sandbox_allows(tmp_path: Path, path: str) -> None:
    assert Sandbox(tmp_path).resolve(path).is_relative_to(tmp_path.resolve())


def test_allowlist_patterns_do_not_approve_chained_commands() -> None:
    allow = ["pytest*", "python -m pytest*"]
    assert command_allowed("pytest -q tests/", allow)
    assert command_allowed("python -m pytest -x", allow)
    assert not command_allowed("pytest; rm -rf ~", allow)
    assert not command_allowed("pytest && curl evil", allow)
    assert not command_allowed("pytest $(curl evil)", allow)
    assert not command_allowed("rm -rf /", allow)


def test_command_env_drops_credentials() -> None:
    env = command_env({"PATH": "/bin", "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "GITHUB_TOKEN": "t",
                       "AWS_SECRET": "s", "DB_PASSWORD": "p", "HOME": "/h"})
    assert env == {"PATH": "/bin", "HOME": "/h"}


def test_commands_run_in_root_without_secrets(
    project: Any, server: Any, make_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_verysecretvalue")
    code = "import os; print(os.getcwd()); print(sorted(k for k in os.environ if 'TOKEN' in k or 'KEY' in k))"
    server.push(fake.message(fake.tool("run_command", command=f'python -c "{code}"')), fake.complete())
    make_agent().run(project.request())
    output = fake.tool_results(server.bodies[1])[0]["content"]
    assert str(project.root) in output
    assert "[]" in output
    assert os.environ["GITHUB_TOKEN"] == "ghp_verysecretvalue"


def test_command_timeout_kills_the_process_group(project: Any, server: Any, make_agent: Any) -> None:
    script = "import subprocess,time; subprocess.Popen(['sleep','30']); time.sleep(30)"
    server.push(fake.message(fake.tool("run_command", command=f'python -c "{script}"')), fake.complete())
    make_agent(command_timeout=0.5).run(project.request())
    result = fake.tool_results(server.bodies[1])[0]
    assert "timed out after 0.5 s" in result["content"]
