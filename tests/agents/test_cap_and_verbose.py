"""Through the real CLI with the fake Messages API: the hard budget cap, and `specd continue -v`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest
from cli_app import App


@pytest.fixture
def app(tmp_path: Path, server: Any) -> App:
    app = App(tmp_path / "proj", server)
    app.pipeline([{"name": "work", "workflow": "work.md"}], agent={"backend": "anthropic"})
    app.new()
    return app


def _model_calls(server: Any) -> int:
    return sum(1 for r in server.requests if r["path"].startswith("/v1/messages")
               and not r["path"].startswith("/v1/messages/count_tokens"))


def test_a_tiny_budget_stops_before_any_request_and_raising_it_completes(app: App, server: Any) -> None:
    stopped = app.cont("anthropic", "--max-cost", "0.0000001")

    assert stopped.returncode == 3, stopped.stderr
    assert _model_calls(server) == 0
    state = app.state()
    assert state.status == "WAITING_FOR_HUMAN"
    assert "run cost budget would be passed" in state.reason
    assert "--max-cost" in stopped.stderr
    assert app.steps() == []

    server.push(fake.complete("done", "worked"))
    resumed = app.cont("anthropic", "--max-cost", "1")

    assert resumed.returncode == 0, resumed.stderr
    assert _model_calls(server) == 1
    assert app.state().status == "COMPLETE"
    assert app.steps() == [("work", "done")]
    assert 0 < app.state().usage["cost_usd"] <= 1


def _script(server: Any) -> None:
    server.push(
        fake.message("Looking at the code first.\nThen I will change it.",
                     fake.tool("read_file", path="src/app.py")),
        fake.message(fake.tool("edit_file", path="src/app.py", old_string="return 1", new_string="return 2")),
        fake.complete("done", "main returns 2"),
    )


def test_verbose_shows_each_tool_call_and_text_as_it_happens(app: App, server: Any) -> None:
    _script(server)

    result = app.cont("anthropic", "-v")

    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()

    def first(fragment: str) -> int:
        return next(i for i, line in enumerate(lines) if fragment in line)

    started, finished = first("▶ work"), first("✔ work → done")
    text = first("│ Looking at the code first. …")
    read = first("↳ read_file path='src/app.py'")
    edit = first("↳ edit_file path='src/app.py', old_string='return 1'")
    assert started < text < read < edit < finished  # in order, each while the step was running
    assert "new_string" not in lines[edit]  # file contents are not echoed
    assert (app.root / "src" / "app.py").read_text() == "def main():\n    return 2\n"


def test_the_default_view_stays_compact(app: App, server: Any) -> None:
    _script(server)

    result = app.cont("anthropic")

    assert result.returncode == 0, result.stderr
    assert "✔ work → done" in result.stderr
    assert "↳" not in result.stderr
    assert "Looking at the code" not in result.stderr


def test_quiet_and_verbose_together_is_a_usage_error(app: App, server: Any) -> None:
    result = app.cont("anthropic", "-q", "-v")

    assert result.returncode == 2
    assert "--quiet and --verbose" in result.stderr
    assert "Traceback" not in result.stderr
    assert server.requests == []
