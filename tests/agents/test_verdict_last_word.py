"""The verdict is the last word, on every backend, through the real CLI.

A review whose agent reports `done` (or, where `done` is refused, `approve`) while the REVIEW.md it wrote says
`Verdict: revise` goes to revise, and the disagreement is kept as a warning in the history row. A review
that declares its outcomes is offered exactly those: no implicit `done` in any backend's contract.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest
from claude_cli import claude_binary, claude_env, prompt_text, schema_outcomes
from cli_app import App

REVISE = "# Review\n\n1. main returns 1\n\nVerdict: revise\n"
# First review: writes REVIEW.md saying revise and reports `done`. Second review: reports approve only.
CMD_AGENT = """
import json, os, sys
from pathlib import Path
sys.stdin.read()
here = Path(__file__).resolve().parent
step = os.environ["SPECD_STEP"]
with open(here / "outcomes.jsonl", "a") as log:
    log.write(json.dumps({"step": step, "offered": os.environ["SPECD_OUTCOMES"]}) + "\\n")
outcome = "done"
if step == "review":
    marker = here / "reviewed"
    if marker.exists():
        outcome = "approve"
    else:
        marker.write_text("1")
        Path(os.environ["SPECD_TASK_DIR"], "REVIEW.md").write_text(REVIEW_TEXT)
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": outcome, "summary": step + " " + outcome}))
""".replace("REVIEW_TEXT", repr(REVISE))
ROUTE = [("review", "revise"), ("fix", "done"), ("review", "approve"), ("final", "done")]


@pytest.fixture
def app(tmp_path: Path) -> App:
    return App(tmp_path / "proj")


def _overruled(app: App, reported: str) -> dict[str, Any]:
    review = next(row for row in app.state().history if row["step"] == "review")
    assert review["outcome"] == "revise"
    assert review["reported_outcome"] == reported
    assert f"reported outcome '{reported}' but .specd/tasks/t/REVIEW.md says 'Verdict: revise'" in review["warning"]
    events = [json.loads(line) for line in (app.task_dir / "events.jsonl").read_text().splitlines()]
    assert any("warning" in json.dumps(e) and "Verdict: revise" in json.dumps(e) for e in events), events
    return review


def test_command_agent_reporting_done_against_a_revise_verdict_goes_to_revise(app: App) -> None:
    app.review_pipeline()
    app.new()

    result = app.cont(app.script("agent.py", CMD_AGENT))

    assert result.returncode == 0, result.stderr
    assert app.steps() == ROUTE
    _overruled(app, "done")
    offered = [json.loads(line) for line in (app.root.parent / "outcomes.jsonl").read_text().splitlines()]
    assert offered[0] == {"step": "review", "offered": "approve,revise"}  # no implicit done
    assert {"step": "fix", "offered": "done"} in offered  # a step that declares nothing still gets done
    assert "Verdict: revise" in result.stderr  # the warning is shown, not only recorded


def test_scripted_agent_reporting_done_against_a_revise_verdict_goes_to_revise(app: App) -> None:
    app.review_pipeline()
    app.new()
    script = app.root.parent / "script.yaml"
    script.write_text(
        "- match: {step: review}\n"
        f"  writes: {{'$task_dir/REVIEW.md': {json.dumps(REVISE)}}}\n"
        "  outcome: done\n"
        "- match: {step: fix}\n  outcome: done\n"
        "- match: {step: review}\n  outcome: approve\n"
        "- match: {step: final}\n  outcome: done\n")

    result = app.cont(f"scripted:{script}")

    assert result.returncode == 0, result.stderr
    assert app.steps() == ROUTE
    _overruled(app, "done")


def test_anthropic_agent_is_refused_done_and_its_approve_is_overruled(tmp_path: Path, server: Any) -> None:
    app = App(tmp_path / "proj", server)
    app.review_pipeline(agent={"backend": "anthropic"})
    app.new()
    server.push(
        fake.message(fake.tool("write_file", path=".specd/tasks/t/REVIEW.md", content=REVISE)),
        fake.complete("done", "reviewed"),  # refused: review declares approve and revise only
        fake.complete("approve", "reviewed"),
        fake.complete("done", "fixed"),
        fake.complete("approve", "fine now"),
        fake.complete("done", "wrapped up"),
    )

    result = app.cont("anthropic")

    assert result.returncode == 0, result.stderr
    assert app.steps() == ROUTE
    _overruled(app, "approve")
    refused = fake.tool_results(server.bodies[2])[0]
    assert refused["is_error"]
    assert "'done' is not allowed here; use one of: approve, revise" in refused["content"]


class ClaudeModel:
    """Plays the model behind the real Claude Code CLI: the first review writes REVISE and reports done."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = task_dir
        self.offered: dict[str, list[str]] = {}
        self.reviews = 0
        self.review_reports: list[str] = []  # the outcomes the first review sent, in order

    def _report(self, outcome: str) -> fake.Reply:
        self.review_reports.append(outcome)
        return fake.message(fake.tool("StructuredOutput", outcome=outcome, summary="reviewed"))

    def __call__(self, body: dict[str, Any]) -> fake.Reply:
        text = prompt_text(body)
        step = text.split("# specd step: ")[-1].split(" ", 1)[0]
        self.offered.setdefault(step, schema_outcomes(body))
        last = body["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(
            last, list) else []
        if step != "review":
            return fake.message(fake.tool("StructuredOutput", outcome="done", summary=f"{step} done"))
        if not results:
            self.reviews += 1
            if self.reviews == 1:
                return fake.message(fake.tool("Write", file_path=str(self.task_dir / "REVIEW.md"), content=REVISE))
            return fake.message(fake.tool("StructuredOutput", outcome="approve", summary="fine now"))
        if self.reviews == 1 and not self.review_reports:  # REVIEW.md is written: now claim `done`
            return self._report("done")
        return fake.message(fake.text("Reported."))


def test_claude_code_reporting_done_against_a_revise_verdict_goes_to_revise(tmp_path: Path) -> None:
    binary = claude_binary()
    app = App(tmp_path / "proj")
    app.review_pipeline(agent={"backend": "claude_code"})
    app.new()
    model = ClaudeModel(app.task_dir)
    with fake.FakeAnthropic(responder=model) as server:
        app.env = claude_env(app.env, url=server.url, home=tmp_path / "home", binary=binary)
        result = app.cont("claude_code")

    assert result.returncode == 0, result.stdout + result.stderr
    assert app.steps() == ROUTE
    assert model.offered["review"] == ["approve", "revise"]  # the prompt's outcomes: no implicit done
    assert model.offered["fix"] == ["done"]
    review = next(row for row in app.state().history if row["step"] == "review")
    assert review["outcome"] == "revise"
    # Claude Code's schema takes any string; the verdict file overrules the reported `done` at once.
    assert model.review_reports == ["done"]
    assert review["reported_outcome"] == "done"
    assert "says 'Verdict: revise'" in review["warning"]
    assert (app.task_dir / "REVIEW.md").read_text() == REVISE


def test_the_builtin_pipeline_never_ends_a_phase_on_a_review_that_reported_done(app: App) -> None:
    (app.root / ".specd" / "pipeline.json").unlink(missing_ok=True)  # the built-in pipeline
    app.new()
    (app.task_dir / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: Only\n\nBuild it.\n")
    reports_done = app.script("done.py", "import json, os, sys\nsys.stdin.read()\n"
                              "open(os.environ['SPECD_RESULT'], 'w').write(json.dumps({'outcome': 'done'}))\n")

    result = app.cont(reports_done)

    assert result.returncode == 1, result.stderr
    state = app.state()
    assert state.status == "BLOCKED"
    # An outcome the step does not declare is sent back like an invalid output, then the step stops.
    assert ("step 'review' failed: its report was refused 3 times; the last: reported outcome 'done'; "
            "allowed: approve, revise, escalate") in state.reason
    refused = [row for row in state.history if row["kind"] == "attempt"]
    assert [row["step"] for row in refused] == ["review"] * 3
    assert app.steps() == [("discuss", "done"), ("research", "done"), ("plan", "done"), ("plan", "done"),
                           ("execute", "done")]
    assert state.phases_completed == []
