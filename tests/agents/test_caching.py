"""Prompt caching breakpoints and the context-window handoff."""

from __future__ import annotations

import json
from typing import Any

import fake_anthropic as fake

from specd.agents.anthropic.conversation import HANDOFF_REQUEST


def _marks(body: dict[str, Any]) -> list[str]:
    where = [f"tool:{t['name']}" for t in body["tools"] if "cache_control" in t]
    where += ["system" for b in body["system"] if "cache_control" in b]
    for i, msg in enumerate(body["messages"]):
        where += [f"msg{i}.{j}" for j, b in enumerate(msg["content"]) if "cache_control" in b]
    return where


def test_breakpoints_on_tools_system_context_and_newest_turn(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")),
                fake.message(fake.tool("list_files", pattern="*")), fake.complete())
    make_agent().run(project.request())
    first, second, third = server.bodies
    assert _marks(first) == ["tool:complete_step", "system", "msg0.0", "msg0.1"]
    assert _marks(second) == ["tool:complete_step", "system", "msg0.0", "msg2.0"]
    assert _marks(third) == ["tool:complete_step", "system", "msg0.0", "msg4.0"]
    saved = (project.task_dir / "transcripts" / "run-1" / "review.conversation.json").read_text()
    assert "cache_control" not in saved


def test_later_turns_read_the_cache(project: Any, server: Any, make_agent: Any) -> None:
    server.push(*[fake.message(fake.tool("list_files", pattern="*")) for _ in range(3)], fake.complete())
    make_agent().run(project.request())
    first, *later = server.usages
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] > 0
    reads = [u["cache_read_input_tokens"] for u in later]
    assert reads[0] >= first["cache_creation_input_tokens"]  # everything written by turn 1 is read by turn 2
    assert reads == sorted(reads)
    assert reads[-1] > reads[0]
    # Each turn pays full price only for what is new.
    assert all(u["cache_creation_input_tokens"] < first["cache_creation_input_tokens"] for u in later)


def test_next_step_reads_tools_system_and_files_from_the_cache(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.complete(), fake.complete())
    agent = make_agent()
    agent.run(project.request())
    agent.run(project.request(step="revise", conversation="revise", prompt="# Revise\nFix it."))
    first_step, second_step = server.usages
    prefix = fake.tokens({k: v for k, v in server.bodies[1]["messages"][0]["content"][0].items()
                          if k != "cache_control"})
    assert second_step["cache_read_input_tokens"] >= prefix
    assert second_step["cache_read_input_tokens"] < first_step["cache_creation_input_tokens"]


def test_caching_can_be_turned_off(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message(fake.tool("list_files", pattern="*")), fake.complete())
    make_agent(prompt_caching=False).run(project.request())
    assert all(_marks(body) == [] for body in server.bodies)
    assert all(u["cache_read_input_tokens"] == 0 for u in server.usages)


def test_context_window_handoff(project: Any, server: Any, make_agent: Any, events: Any) -> None:
    server.push(
        fake.message(fake.tool("read_file", path="src/app.py")),
        fake.message(fake.tool("write_file", path="out.txt", content="half done")),
        fake.message("HANDOFF: read app.py, wrote out.txt; next: finish the review."),
        fake.complete("approve", "finished after handoff"),
    )
    result = make_agent(context_window=1000).run(project.request())
    assert result.outcome == "approve"
    ask_note, fresh = server.bodies[2], server.bodies[3]
    assert HANDOFF_REQUEST in json.dumps(ask_note["messages"][-1])
    assert len(fresh["messages"]) == 1
    assert "HANDOFF: read app.py" in json.dumps(fresh["messages"][0])
    assert "# Review" in json.dumps(fresh["messages"][0])
    run_dir = project.task_dir / "transcripts" / "run-1"
    assert (run_dir / "review.conversation.handoff-1.json").is_file()
    assert json.loads((run_dir / "review.conversation.json").read_text())["handoffs"] == 1
    notices = [e.data for e in events if e.kind == "notice" and e.data.get("handoff")]
    assert len(notices) == 1
    assert "fresh conversation" in notices[0]["message"]
    records = [json.loads(line)["type"] for line in result.transcript.read_text().splitlines()]
    assert "handoff" in records
