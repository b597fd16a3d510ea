"""`specd new`, `continue` without a task, and the command-agent contract as an agent sees it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from brain_harness import Harness


@pytest.mark.parametrize("name", ["a/b", "..", "has space", "Upper", "ends-in-a-newline\n"])
def test_new_rejects_names_that_are_not_slugs(h: Harness, name: str) -> None:
    result = h.specd("new", name)

    assert result.returncode == 2
    assert "not a valid task name" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (h.root / ".specd" / "tasks" / name).exists() or name == ".."


def test_new_creates_the_task_files_and_refuses_an_existing_task(h: Harness) -> None:
    created = h.specd("new", "csv-export", "--description", "Export reports as CSV")

    assert created.returncode == 0, created.stderr
    folder = h.task_dir("csv-export")
    for doc in ("FEATURE.md", "CONTEXT.md", "DECISIONS.md", "CHANGELOG.md", "STATE.md", "config.json"):
        assert (folder / doc).is_file(), doc
    assert "Export reports as CSV" in (folder / "FEATURE.md").read_text(encoding="utf-8")
    config = h.config("csv-export")
    assert config["task_name"] == "csv-export"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", config["created"])
    assert config["stage"] == "discussion"
    assert {"total", "completed", "current"} <= set(config["phases"])

    again = h.specd("new", "csv-export")

    assert again.returncode == 2
    assert "already exists" in again.stderr
    assert h.config("csv-export") == config


def test_continue_without_a_task_and_no_terminal_lists_unfinished_tasks(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}]})
    for task in ("alpha", "beta", "done-one"):
        h.new(task)
    assert h.cont("done-one").returncode == 0

    result = h.specd("continue", "--auto", "--agent", h.agent_spec())  # stdin is /dev/null

    assert result.returncode == 2
    assert "alpha" in result.stderr
    assert "beta" in result.stderr
    assert "done-one" not in result.stderr
    assert h.log() == ["step a"]  # only the run that finished done-one


BODY = "Review the work: BODY-SENTINEL-7431."


def test_command_agent_sees_the_contract(h: Harness) -> None:
    workflow = h.workflow("review.md", outcomes=("approve", "revise"), description="judge the work",
                          body=BODY, extra="owner: FRONTMATTER-SENTINEL-2210")
    h.pipeline({"main": [{"name": "review", "workflow": "review.md", "outcomes": {"approve": "end"}}]})
    h.new("t")
    h.cues(**{"step:review": {"outcomes": ["approve"]}})  # review declares its outcomes: `done` is not one

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    [call] = h.calls()
    env = call["env"]
    task_dir = h.task_dir("t").resolve()
    assert env["SPECD_TASK"] == "t"
    assert Path(env["SPECD_TASK_DIR"]).is_absolute()
    assert Path(env["SPECD_TASK_DIR"]).resolve() == task_dir
    assert env["SPECD_STEP"] == "review"
    assert env["SPECD_PIPELINE"] == "main"
    assert env["SPECD_PHASE"] == ""
    assert env["SPECD_KIND"] == "step"
    assert env["SPECD_MODE"] == "auto"
    assert Path(env["SPECD_WORKFLOW"]).is_absolute()
    assert Path(env["SPECD_WORKFLOW"]).resolve() == workflow.resolve()
    assert Path(env["SPECD_RESULT"]).is_absolute()
    assert call["result_dir_exists"]
    assert Path(call["cwd"]).resolve() == h.root.resolve()
    prompt = call["prompt"]
    assert BODY in prompt
    assert "FRONTMATTER-SENTINEL-2210" not in prompt
    assert "outcomes: [" not in prompt
    assert "approve" in prompt
    assert "revise" in prompt

    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert status["history"][0]["summary"] == "step review -> approve"
    assert env["SPECD_OUTCOMES"] == "approve,revise"
    state_md = (task_dir / ".pipeline-state.md").read_text(encoding="utf-8")
    assert status["run_id"] in state_md
    lines = (task_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines
    events = [json.loads(line) for line in lines]
    assert {"run_started", "step_started", "step_finished", "run_finished"} <= {e["kind"] for e in events}


def test_command_agent_outcome_from_result_file_routes_the_step(h: Harness) -> None:
    h.workflow("review.md", outcomes=("approve", "revise"))
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "review", "workflow": "review.md", "outcomes": {"approve": "end"}},
                         {"name": "after", "workflow": "work.md"}]})
    h.cues(**{"step:review": {"outcomes": ["approve"]}})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step review"]  # approve → end skipped "after"
    assert h.status("t")["history"][0]["outcome"] == "approve"


def test_command_agent_nonzero_exit_blocks_the_task(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md"}]})
    h.cues(**{"step:a": {"exit": 7}})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 1, result.stderr
    assert h.log() == ["step a"]
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    assert "exited with status 7" in status["reason"]
    assert status["next"]["step"] == "a"
    state_md = (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")
    assert status["run_id"] in state_md
    assert "BLOCKED" in state_md
    for line in (h.task_dir("t") / "events.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)

    h.cues()
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    assert h.log() == ["step a", "step a", "step b"]


def test_a_per_step_cap_a_command_agent_cannot_keep_is_refused_before_the_run(h: Harness) -> None:
    """A command agent reports its usage when its step has ended: agent.max_step_cost_usd could not stop it,
    so the run does not start (exit 2, the key and the fix named), and nothing is saved; a run-wide cap runs."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"max_step_cost_usd": 0.5})
    h.new("t")
    refused = h.cont("t")
    assert refused.returncode == 2, refused.stderr
    assert "agent.max_step_cost_usd: the command agent cannot keep a per-step cap" in refused.stderr
    assert "pipeline.json" in refused.stderr
    assert "agent.max_cost_usd" in refused.stderr  # the fix
    assert not (h.task_dir("t") / ".pipeline-state.json").exists()
    assert h.log() == []
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"max_cost_usd": 0.5, "max_tokens": 10**6})
    ran = h.cont("t")
    assert ran.returncode == 0, ran.stderr
    assert h.log() == ["step a"]
