"""run_command: escapes refused in every mode, a clean environment, a timeout that kills the tree."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.anthropic.commands import escape
from specd.system import jail

ALLOW = ["git *", "ls*", "pytest*", "python -c*", "cat *"]
# The ways an allowlisted command was seen to reach outside the project, and a few more.
ESCAPES = [
    "git diff --output=../x", "pytest --junitxml=../x.xml", "git diff --no-index ../secret /dev/null", "ls ../",
    "git diff -o../x", "ls ~", "cat /etc/hostname", "ls link-out", "cat link-out/keep.txt", "ls $HOME",
    "python -c \"open('../x', 'w').write('pwned')\"", "ls .*", "ls ..",
    # specd's machinery and .git, named directly, as a file a writing option would create, or through a glob
    "git diff --output=.specd/pipeline.json", "git diff --output=.git/hooks/pre-commit", "git diff -o.git/config",
    "pytest --junitxml=.specd/hooks/pre-b.md", "cat .specd/pipeline.json", "ls .git", "git -C .git status",
    "git diff --output=.specd/workflows/x.md",
    # links and hard links reached through a glob or named plainly
    "cat link-*/keep.txt", "cat l*", "cat hard-linked.txt", "cat hard*",
]


def _modes() -> list[str]:
    return ["allowlist", "bubblewrap"] if jail.active() else ["allowlist"]


def _tree(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("mode", _modes())
def test_escape_strings_are_refused_and_the_run_goes_on(
    project: Any, server: Any, make_agent: Any, mode: str
) -> None:
    (project.root / "link-out").symlink_to(project.outside)
    (project.root.parent / "secret").write_text("s3cret")
    os.link(project.root.parent / "secret", project.root / "hard-linked.txt")
    (project.root / ".specd").mkdir(exist_ok=True)
    (project.root / ".specd" / "pipeline.json").write_text("{}")
    before = _tree(project.root.parent)
    server.push(
        fake.message(*[fake.tool("run_command", command=c) for c in ESCAPES]),
        fake.message(fake.tool("run_command", command="git diff --no-index src/app.py /dev/null")),
        fake.complete("approve"),
    )
    result = make_agent(allow_commands=ALLOW, sandbox=mode).run(project.request())

    assert result.outcome == "approve"
    for command, answer in zip(ESCAPES, fake.tool_results(server.bodies[1]), strict=True):
        assert answer["is_error"], command
        assert answer["content"].startswith("refused:"), (command, answer["content"])
    inside = fake.tool_results(server.bodies[2])[0]  # a path inside the project (and /dev/null) is fine
    assert "def main" in inside["content"]
    after = {k: v for k, v in _tree(project.root.parent).items() if "/transcripts/" not in k and "PROJECT" not in k}
    assert after == {k: v for k, v in before.items() if "/transcripts/" not in k}
    assert not (project.root.parent / "x").exists()
    assert not (project.root.parent / "x.xml").exists()


@pytest.mark.parametrize("command", ["pytest -q tests/", "git diff --output=out.diff", "ls src", "ls", "ls .",
                                     "git diff --no-index src/app.py /dev/null", "python -c \"print(1)\"",
                                     "git log --format=%H -n 1", "pytest --junitxml=reports/x.xml"])
def test_commands_inside_the_project_pass(tmp_path: Path, command: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    assert escape(command, tmp_path.resolve()) is None


@pytest.mark.parametrize("mode", _modes())
def test_commands_run_in_root_without_secrets(
    project: Any, server: Any, make_agent: Any, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_verysecretvalue")
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T/B/x")
    monkeypatch.setenv("NPM_TOKEN", "npm-allowed-value")
    code = "import os; print(os.getcwd()); print(sorted(k for k in os.environ if 'TOKEN' in k or 'WEBHOOK' in k))"
    server.push(fake.message(fake.tool("run_command", command=f'python -c "{code}"')), fake.complete())
    make_agent(sandbox=mode, env_allow=["NPM_TOKEN"]).run(project.request())
    output = fake.tool_results(server.bodies[1])[0]["content"]
    assert str(project.root) in output
    assert "['NPM_TOKEN']" in output
    assert os.environ["GITHUB_TOKEN"] == "ghp_verysecretvalue"  # specd's own environment is untouched


@pytest.mark.parametrize("mode", _modes())
def test_command_timeout_kills_the_process_group(project: Any, server: Any, make_agent: Any, mode: str) -> None:
    script = "import subprocess,time; subprocess.Popen(['sleep','30']); time.sleep(30)"
    server.push(fake.message(fake.tool("run_command", command=f'python -c "{script}"')), fake.complete())
    make_agent(command_timeout=0.5, sandbox=mode).run(project.request())
    result = fake.tool_results(server.bodies[1])[0]
    assert "timed out after 0.5 s" in result["content"]


def test_missing_bwrap_falls_back_or_fails_as_asked(
    project: Any, server: Any, make_agent: Any, events: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from specd.errors import ConfigError

    monkeypatch.setenv("SPECD_BWRAP", str(project.root / "no-such-bwrap"))
    assert not jail.active()
    with pytest.raises(ConfigError, match="bubblewrap"):
        make_agent(sandbox="bubblewrap").run(project.request())
    (project.root / "a.txt").write_text("A")
    # auto: falls back to commands without a shell, so a glob reaches the program as it is written
    # and shell syntax the allowlist refuses is refused even when a human approves it.
    server.push(fake.message(fake.tool("run_command", command="ls *.txt"),
                             fake.tool("run_command", command="ls a.txt | cat")), fake.complete())
    make_agent(allow_commands=["ls *"]).run(project.request())
    glob, pipe = fake.tool_results(server.bodies[1])
    assert "'*.txt': No such file" in glob["content"]  # ls got the pattern itself: nothing expanded it
    assert pipe["is_error"]
    assert "without a shell" in pipe["content"]
