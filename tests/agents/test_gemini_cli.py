"""`--agent gemini[:<model>]` through the real `specd` CLI and the real Gemini CLI, against the fake API."""

from __future__ import annotations

from pathlib import Path

import fake_gemini as fake
from cli_app import App
from gemini_cli import gemini_binary, gemini_env


def app_for(tmp_path: Path, server: fake.FakeGemini) -> App:
    app = App(tmp_path / "proj")
    app.env = {**gemini_env(app.env, url=server.url, home=tmp_path / "home", binary=gemini_binary()),
               "COLUMNS": "200"}
    app.pipeline([{"name": "build", "workflow": "build.md"}])
    app.new()
    return app


def test_agent_gemini_with_a_model_runs_the_step_on_that_model(tmp_path: Path) -> None:
    with fake.FakeGemini([fake.outcome("done", "built it")]) as server:
        app = app_for(tmp_path, server)
        run = app.cont("gemini:gemini-2.5-flash")
    assert run.returncode == 0, run.stdout + run.stderr
    assert app.steps() == [("build", "done")]
    [turn] = [r for r in server.requests if ":streamGenerateContent" in r["path"]]
    assert "/models/gemini-2.5-flash:" in turn["path"]
    [row] = [r for r in app.state().history if r.get("kind", "step") == "step"]
    assert row["usage"]["input_tokens"] == 1000
    assert row["usage"]["cost_usd"] == (1000 * 0.3 + 100 * 2.5) / 1e6  # gemini-2.5-flash's price


def test_no_key_and_no_login_is_bad_input_naming_the_fix(tmp_path: Path) -> None:
    with fake.FakeGemini() as server:
        app = app_for(tmp_path, server)
        app.env.pop("GEMINI_API_KEY")
        run = app.cont("gemini")
    assert run.returncode == 2
    assert "no GEMINI_API_KEY" in run.stderr
    assert "Traceback" not in run.stderr
    assert server.requests == []
    assert not (Path(app.env["HOME"]) / ".gemini").exists()  # asking the CLI its version left ~/.gemini alone
