"""The file sandbox: escapes and specd's machinery come back as tool errors; nothing outside changes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.anthropic.commands import command_allowed, command_env
from specd.agents.anthropic.sandbox import Refused, Sandbox

OUTSIDE = ["../x", "/etc/passwd", "link-out/keep.txt", "sub/../../x"]
# Every file of specd's own that an agent could use to take over the next run, or corrupt this one.
MACHINERY = [
    ".specd/pipeline.json", ".specd/pipeline.yaml", ".specd/config.json", ".specd/.gitignore",
    ".specd/hooks/pre-execute.md", ".specd/workflows/execute.md", ".git/config", ".git/hooks/pre-commit",
    ".specd/tasks/t/.pipeline-state.json", ".specd/tasks/t/.pipeline-state.md", ".specd/tasks/t/events.jsonl",
    ".specd/tasks/t/.run.lock", ".specd/tasks/t/.run.lock.owner", ".specd/tasks/t/.heartbeat",
    ".specd/tasks/t/config.json", ".specd/tasks/t/transcripts/run-0/001-discuss.log",
    ".specd/tasks/t/.some-future-state", "innocent.md",
]


def _fingerprint(*folders: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _machinery(project: Any) -> None:
    for rel in MACHINERY[:-1]:
        path = project.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(f"original {rel}\n")
    (project.root / "innocent.md").symlink_to(project.root / ".git" / "config")


def test_writes_outside_the_project_are_tool_errors(project: Any, server: Any, make_agent: Any) -> None:
    (project.root / "link-out").symlink_to(project.outside)
    before = _fingerprint(project.outside)
    passwd_before = Path("/etc/passwd").read_bytes() if Path("/etc/passwd").exists() else b""
    server.push(
        fake.message(*[fake.tool("read_file", path=p) for p in OUTSIDE]),
        fake.message(*[fake.tool("write_file", path=p, content="pwned") for p in OUTSIDE]),
        fake.message(*[fake.tool("edit_file", path=p, old_string="a", new_string="b") for p in OUTSIDE]),
        fake.complete("approve"),
    )
    result = make_agent().run(project.request())

    assert result.outcome == "approve"  # the run went on
    for body in server.bodies[1:4]:
        for path, answer in zip(OUTSIDE, fake.tool_results(body), strict=True):
            assert answer["is_error"], path
            assert answer["content"].startswith("refused:"), (path, answer["content"])
            assert "outside the project" in answer["content"]
    assert _fingerprint(project.outside) == before
    assert not (project.root.parent / "x").exists()
    if passwd_before:
        assert Path("/etc/passwd").read_bytes() == passwd_before


def test_machinery_can_be_read_but_not_written(project: Any, server: Any, make_agent: Any) -> None:
    _machinery(project)
    before = _fingerprint(project.root / ".specd", project.root / ".git")
    server.push(
        fake.message(*[fake.tool("write_file", path=p, content="pwned") for p in MACHINERY]),
        fake.message(*[fake.tool("edit_file", path=p, old_string="original", new_string="pwned")
                       for p in MACHINERY]),
        fake.message(fake.tool("read_file", path=".specd/pipeline.json"), fake.tool("read_file", path=".git/config")),
        fake.message(fake.tool("write_file", path=".specd/tasks/t/PLAN.md", content="# Plan\n")),
        fake.complete("approve"),
    )
    result = make_agent().run(project.request())

    assert result.outcome == "approve"
    for body in server.bodies[1:3]:
        for path, answer in zip(MACHINERY, fake.tool_results(body), strict=True):
            assert answer["is_error"], path
            assert "writing refused" in answer["content"], (path, answer["content"])
    pipeline, git_config = fake.tool_results(server.bodies[3])
    assert not pipeline["is_error"]
    assert pipeline["content"] == "original .specd/pipeline.json"
    assert not git_config["is_error"]
    assert not fake.tool_results(server.bodies[4])[0]["is_error"]  # the task's own documents stay writable
    after = _fingerprint(project.root / ".specd", project.root / ".git")
    assert {k: v for k, v in after.items() if k in before} == before
    assert not (project.task_dir / "transcripts" / "run-0" / "002-x.log").exists()


def test_loops_links_and_odd_files_are_tool_errors(project: Any, server: Any, make_agent: Any) -> None:
    root = project.root
    (root / "loop").symlink_to("loop")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    os.link(project.outside / "keep.txt", root / "hard.txt")  # a second name for a file outside
    os.mkfifo(root / "pipe")
    (root / "folder").mkdir()
    long_name = "n" * 300
    targets = ["loop", "a", "hard.txt", "pipe", "folder", long_name, "loop/inside.txt"]
    server.push(
        fake.message(*[fake.tool("read_file", path=p) for p in targets]),
        fake.message(*[fake.tool("write_file", path=p, content="pwned") for p in targets]),
        fake.message(fake.tool("list_files", pattern="**/*"), fake.tool("search_files", regex="untouched")),
        fake.complete("approve"),
    )
    result = make_agent().run(project.request())

    assert result.outcome == "approve"
    for body in server.bodies[1:3]:
        for path, answer in zip(targets, fake.tool_results(body), strict=True):
            assert answer["is_error"], (path, answer["content"])
            assert "Traceback" not in answer["content"]
    reads = fake.tool_results(server.bodies[1])
    assert "symlink loop" in reads[0]["content"]
    assert "hard links" in reads[2]["content"]
    assert "not a regular file" in reads[3]["content"]
    listed, searched = fake.tool_results(server.bodies[3])
    assert "hard.txt" not in listed["content"]
    assert "src/app.py" in listed["content"]
    assert searched["content"] == "no matches"  # the hard link's text stays unread
    assert (project.outside / "keep.txt").read_text() == "untouched"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file whatever its mode")
def test_unreadable_file_is_a_tool_error(project: Any, server: Any, make_agent: Any) -> None:
    secret = project.root / "locked.txt"
    secret.write_text("x")
    secret.chmod(0)
    server.push(fake.message(fake.tool("read_file", path="locked.txt")), fake.complete("approve"))
    assert make_agent().run(project.request()).outcome == "approve"
    answer = fake.tool_results(server.bodies[1])[0]
    assert answer["is_error"]
    assert "Permission" in answer["content"]


def test_list_and_search_never_show_state_or_outside(project: Any, server: Any, make_agent: Any) -> None:
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


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "sub/../../x", ""])
def test_sandbox_refuses_outside(tmp_path: Path, path: str) -> None:
    with pytest.raises(Refused):
        Sandbox(tmp_path).resolve(path)


@pytest.mark.parametrize("path", [p for p in MACHINERY if p != "innocent.md"] + [
    ".git", ".specd", ".specd/codex/config.toml", ".specd/worktrees/other/src/app.py", ".specd/homes/t.json",
    # what your own agent CLIs run outside any jail when next started here
    ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/fmt.sh", ".mcp.json",
    ".codex/config.toml", ".gemini/settings.json"])
def test_sandbox_refuses_writing_machinery(tmp_path: Path, path: str) -> None:
    sandbox = Sandbox(tmp_path)
    assert sandbox.resolve(path).is_relative_to(tmp_path.resolve())  # reading is fine
    with pytest.raises(Refused, match="writing refused"):
        sandbox.resolve(path, write=True)


@pytest.mark.parametrize("path", ["a.txt", "src/../a.txt", ".specd/tasks/t/PLAN.md", ".specd/PROJECT.md",
                                  ".specd/tasks/t/phases/phase-01/PLAN.md", ".specd/tasks/t/CHANGELOG.md",
                                  ".claude/agents/reviewer.md", "docs/.mcp.json.md", "src/settings.json",
                                  ".claude/hooksy.md"])
def test_sandbox_allows_writing(tmp_path: Path, path: str) -> None:
    assert Sandbox(tmp_path).resolve(path, write=True).is_relative_to(tmp_path.resolve())


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
                       "AWS_SECRET_ACCESS_KEY": "s", "DB_PASSWORD": "p", "SLACK_WEBHOOK_URL": "w",
                       "SENTRY_DSN": "d", "HOME": "/h", "GIT_AUTHOR_NAME": "Ann"})
    assert env == {"PATH": "/bin", "HOME": "/h", "GIT_AUTHOR_NAME": "Ann"}


def test_command_env_keeps_what_the_config_allows() -> None:
    env = command_env({"PATH": "/bin", "NPM_TOKEN": "n", "GITHUB_TOKEN": "t"}, allow=["NPM_TOKEN"])
    assert env == {"PATH": "/bin", "NPM_TOKEN": "n"}


def test_a_file_too_big_to_read_whole_is_refused_with_a_way_to_read_part_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.agents.anthropic import sandbox as module

    monkeypatch.setattr(module, "READ_LIMIT", 1000)
    (tmp_path / "big.log").write_bytes(b"x" * 1001)
    (tmp_path / "fits.log").write_bytes(b"y" * 1000)
    assert Sandbox(tmp_path).read_text("fits.log") == "y" * 1000
    with pytest.raises(Refused, match=r"big.log: larger than .*head, sed -n, grep"):
        Sandbox(tmp_path).read_text("big.log")
