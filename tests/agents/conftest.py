"""Fixtures for the anthropic backend: a project in tmp_path, the fake API server, requests.

The agent builds its own real ``anthropic.Anthropic`` client, pointed at the
fake server through ``base_url``; retries wait microseconds, and the agent's
sleep is recorded instead of slept, so no test depends on timing.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from specd.agents.base import AgentContext, AgentRequest, Budget
from specd.events import Event, EventBus
from specd.human import GateAnswer, GateInfo

SECRET = "sk-ant-test-SECRET123"
_spec = importlib.util.spec_from_file_location("fake_anthropic", Path(__file__).parents[1] / "fake_anthropic.py")
assert _spec
assert _spec.loader
fake = importlib.util.module_from_spec(_spec)
sys.modules["fake_anthropic"] = fake
_spec.loader.exec_module(fake)


@dataclass
class ScriptedHuman:
    present: bool = True
    answers: list[str] = field(default_factory=list)
    approve: bool = True
    asked: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def gate(self, info: GateInfo) -> GateAnswer:
        return GateAnswer("proceed")

    def ask(self, question: str) -> str | None:
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else None

    def approve_command(self, command: str) -> bool:
        self.commands.append(command)
        return self.approve


@dataclass
class Project:
    root: Path
    task_dir: Path
    outside: Path  # a folder beside the project that must never change

    def request(self, **overrides: Any) -> AgentRequest:
        values: dict[str, Any] = {
            "task": "t", "task_dir": self.task_dir, "project_root": self.root, "step": "review",
            "pipeline": "main", "phase": None, "kind": "step", "workflow": self.root / "workflows" / "review.md",
            "prompt": "# Review\nReview the work and call complete_step.",
            "outcomes": ("approve", "revise", "done"),  # as a step whose pipeline also routes `done`
            "mode": "auto", "run_id": "run-1", "conversation": "review", "budget": Budget(),
            "frontmatter": {"verdict_file": "REVIEW.md"},
        }
        values.update(overrides)
        return AgentRequest(**values)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    task_dir = root / ".specd" / "tasks" / "t"
    task_dir.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (task_dir / "FEATURE.md").write_text("# Feature\nAdd CSV export.\n")
    (task_dir / "DECISIONS.md").write_text("# Decisions\n")
    (task_dir / ".pipeline-state.json").write_text('{"status": "IN_PROGRESS"}')
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched")
    return Project(root, task_dir, outside)


@pytest.fixture
def scripted_human() -> type[ScriptedHuman]:
    return ScriptedHuman


@pytest.fixture
def server() -> Iterator[Any]:
    with fake.FakeAnthropic() as srv:
        yield srv


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def cc(project: Any, server: Any, events: list[Event], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The claude_code backend around the real Claude Code CLI, pointed at the fake Messages API."""
    from claude_cli import claude_binary, claude_env

    from specd.agents.claude_code import make_claude_code

    binary = claude_binary()
    env = claude_env({}, url=server.url, home=tmp_path / "home", binary=binary)
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "ANTHROPIC_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return make_claude_code(None, {}, AgentContext(human=None, events=EventBus(events.append)))  # type: ignore[arg-type]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_agent(
    server: Any, events: list[Event], sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    from specd.agents.anthropic import AnthropicAgent

    def build(human: Any = None, **settings: Any) -> AnthropicAgent:
        merged = {"backend": "anthropic", "base_url": server.url, "retry_backoff": 0.001,
                  "allow_commands": ["python -c*", "pytest*"], **settings}
        ctx = AgentContext(human or ScriptedHuman(present=False), EventBus(events.append))
        return AnthropicAgent(merged, ctx, sleep=sleeps.append)

    return build



@pytest.fixture
def openai_server() -> Iterator[Any]:
    """A local fake OpenAI-compatible server the real openai SDK talks to (tests/fake_openai.py)."""
    from openai_app import fake

    with fake.FakeOpenAI() as srv:
        yield srv
