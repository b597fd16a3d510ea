"""The scripted agent: matching, consumption, expansion, and replay after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from specd.agents.base import AgentContext, AgentFailed, AgentRequest
from specd.agents.scripted import ScriptedAgent
from specd.events import EventBus
from specd.human import NoHuman

SCRIPT = """
entries:
  - match: {kind: hook}
    sticky: true
    summary: hook ok
  - match: {step: review}
    outcome: revise
    writes: {"$task_dir/REVIEW-$phase.md": "Verdict: revise for $task"}
  - match: {step: review}
    outcome: approve
    appends: {"$task_dir/log.md": "approved $phase\\n"}
  - match: {step: boom}
    fail: "cannot do $task"
"""


def request(root: Path, step: str, conversation: str, kind: str = "step") -> AgentRequest:
    task_dir = root / ".specd" / "tasks" / "t"
    task_dir.mkdir(parents=True, exist_ok=True)
    return AgentRequest(task="t", task_dir=task_dir, project_root=root, step=step, pipeline="p", phase="02",
                        kind=kind, workflow=root / "w.md", prompt="", outcomes=("done",), mode="auto",
                        run_id="r", conversation=conversation)  # type: ignore[arg-type]


@pytest.fixture
def agent(tmp_path: Path) -> ScriptedAgent:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    return ScriptedAgent(script, AgentContext(NoHuman(), EventBus()))


def test_entries_are_consumed_in_order_and_expand_placeholders(agent: ScriptedAgent, tmp_path: Path) -> None:
    first = agent.run(request(tmp_path, "review", "v1"))
    second = agent.run(request(tmp_path, "review", "v2"))
    assert (first.outcome, second.outcome) == ("revise", "approve")
    task_dir = tmp_path / ".specd" / "tasks" / "t"
    assert (task_dir / "REVIEW-02.md").read_text() == "Verdict: revise for t"
    assert (task_dir / "log.md").read_text() == "approved 02\n"
    with pytest.raises(AgentFailed, match="no entry left"):
        agent.run(request(tmp_path, "review", "v3"))


def test_a_rerun_of_the_same_request_replays_its_entry(agent: ScriptedAgent, tmp_path: Path) -> None:
    assert agent.run(request(tmp_path, "review", "v1")).outcome == "revise"
    # The process died before the loop recorded the step: the re-run must not take the next entry.
    assert agent.run(request(tmp_path, "review", "v1")).outcome == "revise"
    assert agent.run(request(tmp_path, "review", "v2")).outcome == "approve"


def test_sticky_entries_serve_every_hook_and_fail_entries_raise(agent: ScriptedAgent, tmp_path: Path) -> None:
    for n in range(3):
        assert agent.run(request(tmp_path, "x", f"c{n}", kind="hook")).summary == "hook ok"
    with pytest.raises(AgentFailed, match="cannot do t"):
        agent.run(request(tmp_path, "boom", "b1"))
