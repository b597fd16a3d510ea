"""One outcome contract for every backend, through the real CLI.

- An agent that reports no outcome in a step whose workflow names a ``verdict_file`` is routed by the
  file's ``Verdict:`` line: command, scripted and anthropic alike.
- A command agent learns how to report from its prompt and environment, and its reported usage is
  checked field by field.
- The built-in pipeline with ``cmd:true`` cannot "approve" a review that decided nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest
from cli_app import App

from specd.resources import builtin_dir

ROADMAP = "# Roadmap\n\n## Phases\n\n### Phase 1: Only\n\nBuild it.\n"
# A command agent that writes REVIEW.md on its first review only, and never writes $SPECD_RESULT.
VERDICT_AGENT = """
import json, os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
prompt = sys.stdin.read()
with open(here / "calls.jsonl", "a") as log:
    log.write(json.dumps({"step": os.environ["SPECD_STEP"], "prompt": prompt,
                          "env": {k: v for k, v in os.environ.items() if k.startswith("SPECD_")}}) + "\\n")
marker = here / "reviewed"
if os.environ["SPECD_STEP"] == "review" and not marker.exists():
    marker.write_text("1")
    review = Path(os.environ["SPECD_TASK_DIR"], "REVIEW.md")
    review.write_text("# Review\\n\\n1. main returns 1\\n\\nVerdict: revise\\n")
"""


@pytest.fixture
def app(tmp_path: Path) -> App:
    return App(tmp_path / "proj")


def test_command_agent_verdict_line_routes_the_review(app: App) -> None:
    app.review_pipeline()
    app.new()
    agent = app.script("agent.py", VERDICT_AGENT)

    result = app.cont(agent)

    # The second review finds only the first one's verdict, unchanged: it decided nothing, so it fails.
    assert result.returncode == 1, result.stderr
    assert app.steps() == [("review", "revise"), ("fix", "done")]
    review = app.state().history[0]
    assert review["verdict_file"] == str(app.task_dir / "REVIEW.md")
    state = app.state()
    assert state.status == "BLOCKED"
    assert "REVIEW.md still holds 'Verdict: revise' from before this step" in state.reason
    assert "Traceback" not in result.stderr


def test_scripted_agent_verdict_line_routes_the_review(app: App) -> None:
    app.review_pipeline()
    app.new()
    script = app.root.parent / "script.yaml"
    script.write_text(
        "- match: {step: review}\n"
        "  writes: {'$task_dir/REVIEW.md': \"# Review\\n\\nVerdict: revise\\n\"}\n"
        "- match: {step: fix}\n  summary: fixed\n"
        "- match: {step: review}\n"
        "  writes: {'$task_dir/REVIEW.md': \"# Review, round 2\\n\\nVerdict: approve\\n\"}\n"
        "- match: {step: final}\n  outcome: done\n")

    result = app.cont(f"scripted:{script}")

    assert result.returncode == 0, result.stderr
    assert app.steps() == [("review", "revise"), ("fix", "done"), ("review", "approve"), ("final", "done")]


def test_anthropic_verdict_line_routes_the_review(tmp_path: Path, server: Any) -> None:
    app = App(tmp_path / "proj", server)
    app.review_pipeline(agent={"backend": "anthropic"})
    app.new()
    server.push(
        fake.message(fake.tool("write_file", path=".specd/tasks/t/REVIEW.md",
                               content="# Review\n\n1. main returns 1\n\nVerdict: revise\n")),
        fake.message("I wrote the review."), fake.message("The review is in REVIEW.md."),  # no complete_step
        fake.complete("done", "fixed"),
        fake.complete("approve", "fine now"),
        fake.complete("done", "wrapped up"),
    )

    result = app.cont("anthropic")

    assert result.returncode == 0, result.stderr
    assert app.steps() == [("review", "revise"), ("fix", "done"), ("review", "approve"), ("final", "done")]
    assert "the Verdict line in REVIEW.md decides" in result.stderr


def test_builtin_pipeline_with_cmd_true_blocks_at_a_review_that_decided_nothing(app: App) -> None:
    app.new()
    (app.task_dir / "ROADMAP.md").write_text(ROADMAP)

    result = app.cont("cmd:true")

    assert result.returncode == 1, result.stderr
    state = app.state()
    assert state.status == "BLOCKED"
    assert app.steps() == [("discuss", "done"), ("research", "done"), ("plan", "done"), ("plan", "done"),
                           ("execute", "done")]
    assert "step 'review' failed: the agent reported no outcome and no 'Verdict:' line was found" in state.reason
    assert ".specd/tasks/t/phases/phase-01/REVIEW.md" in state.reason
    assert "REVIEW.md" in result.stderr
    assert "Traceback" not in result.stderr


def test_command_agent_prompt_and_environment_say_how_to_report(app: App) -> None:
    app.pipeline([{"name": "review", "workflow": "review.md", "model": "claude-step-model"},
                  {"name": "final", "workflow": "final.md"}],
                 agent={"backend": "command", "max_turns": 7})
    app.new()
    agent = app.script("agent.py", VERDICT_AGENT)

    result = app.cont(agent)

    assert result.returncode == 0, result.stderr
    calls = [json.loads(line) for line in (app.root.parent / "calls.jsonl").read_text().splitlines()]
    review, final = calls
    assert "$SPECD_RESULT" in review["prompt"]
    assert "exactly one of: approve, revise, and" in review["prompt"]
    assert '{"outcome": "approve", "summary": ' in review["prompt"]
    assert "verdict file is REVIEW.md" in review["prompt"]
    assert "complete_step" not in review["prompt"]
    assert review["env"]["SPECD_OUTCOMES"] == "approve,revise"
    assert review["env"]["SPECD_MODEL"] == "claude-step-model"
    assert review["env"]["SPECD_MAX_TURNS"] == "7"
    assert final["env"]["SPECD_OUTCOMES"] == "done"
    assert final["env"]["SPECD_MODEL"] == ""
    assert "verdict file" not in final["prompt"]
    assert app.steps() == [("review", "revise"), ("final", "done")]


def test_builtin_workflows_and_hooks_name_no_tool() -> None:
    files = [*builtin_dir("workflows").glob("*.md"), *builtin_dir("hooks").glob("*.md")]
    assert len(files) >= 7
    for path in files:
        text = path.read_text(encoding="utf-8")
        for tool in ("complete_step", "ask_user", "run_command", "write_file", "edit_file", "search_files"):
            assert tool not in text, f"{path.name} names {tool}"


RESULT_AGENT = """
import json, os
with open(os.environ["SPECD_RESULT"], "w") as out:
    out.write('{"outcome": "done", "summary": "ok", "usage": %s}')
"""


@pytest.mark.parametrize(("usage", "field", "shown"), [
    ('"x"', "`usage`", "str 'x'"),
    ("null", "`usage`", "null"),
    ('{"input_tokens": "abc"}', "`usage.input_tokens`", "str 'abc'"),
    ('{"output_tokens": null}', "`usage.output_tokens`", "null"),
    ('{"cache_read_input_tokens": 1.5}', "`usage.cache_read_input_tokens`", "float '1.5'"),
    ('{"input_tokens": true}', "`usage.input_tokens`", "bool 'True'"),
    ('{"cost_usd": -100}', "`usage.cost_usd`", "int '-100'"),
    ('{"cost_usd": NaN}', "`usage.cost_usd`", "float 'nan'"),
    ('{"cost_usd": "0.1"}', "`usage.cost_usd`", "str '0.1'"),
])
def test_malformed_usage_blocks_the_step_naming_the_field(app: App, usage: str, field: str, shown: str) -> None:
    app.pipeline([{"name": "work", "workflow": "work.md"}])
    app.new()

    result = app.cont(app.script("agent.py", RESULT_AGENT % usage))

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    state = app.state()
    assert state.status == "BLOCKED"
    assert state.current is not None  # the step is still there to retry, not half-recorded
    assert app.steps() == []
    assert f"$SPECD_RESULT: {field} must be" in state.reason
    assert f"not {shown}" in state.reason
    assert field in result.stderr


def test_valid_usage_is_recorded(app: App) -> None:
    app.pipeline([{"name": "work", "workflow": "work.md"}])
    app.new()
    usage = '{"input_tokens": 120, "output_tokens": 40.0, "cost_usd": 0.25, "service_tier": "standard"}'

    result = app.cont(app.script("agent.py", RESULT_AGENT % usage))

    assert result.returncode == 0, result.stderr
    usage = app.state().history[-1]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (120, 40, 0.25)
