"""The outcome contract on the openai backend, through the real CLI: the verdict file has the last word,
it decides when complete_step never comes, and an inline hook continues its step's conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_app import App, fake

REVIEW = ("---\ndescription: review\noutcomes: [approve, revise]\nverdict_file: REVIEW.md\n---\n\n"
          "# Review\n\nReview src/app.py; end REVIEW.md with `Verdict: approve` or `Verdict: revise`.\n")
HOOK = "---\ndescription: after build\n---\n\n# After build\n\nSay what the build step changed.\n"


@pytest.fixture
def app(tmp_path: Path, openai_server: Any) -> App:
    app = App(tmp_path / "proj", openai_server)
    app.pipeline([{"name": "review", "workflow": "review.md", "outcomes": {"revise": "fix", "approve": "final"}},
                  {"name": "fix", "workflow": "fix.md", "outcomes": {"done": "final"}},
                  {"name": "final", "workflow": "final.md"}])
    (app.root / ".specd" / "workflows" / "review.md").write_text(REVIEW)
    return app


def test_a_review_that_reports_approve_while_its_verdict_file_says_revise_goes_to_revise(app: App) -> None:
    app.new()
    review = ".specd/tasks/t/REVIEW.md"
    app.server.push(fake.message(fake.call("write_file", path=review, content="Bad.\n\nVerdict: revise\n")),
                    fake.complete("approve", "looks fine"), fake.complete("done", "fixed"),
                    fake.complete("done", "wrapped up"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert [(row["step"], row["outcome"]) for row in app.history()] == [
        ("review", "revise"), ("fix", "done"), ("final", "done")]


def test_without_complete_step_even_after_a_reminder_the_verdict_file_decides(app: App) -> None:
    app.new()
    review = ".specd/tasks/t/REVIEW.md"
    app.server.push(fake.message(fake.call("write_file", path=review, content="Good.\n\nVerdict: approve\n")),
                    fake.message(text="All done."), fake.message(text="Really done."),
                    fake.complete("done", "wrapped up"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    assert [(row["step"], row["outcome"]) for row in app.history()] == [("review", "approve"), ("final", "done")]
    reminder = app.server.bodies[2]["messages"][-1]
    assert reminder["role"] == "user"
    assert "without calling complete_step" in reminder["content"]


def test_an_inline_hook_continues_the_step_conversation(app: App) -> None:
    app.two_steps()
    (app.root / ".specd" / "hooks").mkdir()
    (app.root / ".specd" / "hooks" / "post-build.md").write_text(HOOK)
    app.new()
    app.server.push(fake.message(fake.call("read_file", path="src/app.py")), fake.complete("done", "built"),
                    fake.complete("done", "hook said"), fake.complete("done", "checked"))
    run = app.cont()
    assert run.returncode == 0, run.stdout + run.stderr
    hook, check = app.server.bodies[2], app.server.bodies[3]
    said = json.dumps(hook["messages"])
    assert "def main():" in said  # the step's read_file result is in the hook's context
    assert "Say what the build step changed." in said
    assert "def main():" not in json.dumps(check["messages"])  # the next step starts afresh
