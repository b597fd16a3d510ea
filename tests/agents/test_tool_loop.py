"""The tool loop end to end against the fake API: read, write, command, complete_step."""

from __future__ import annotations

import json
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.base import AgentFailed


def test_read_write_command_and_complete_with_revise(project: Any, server: Any, make_agent: Any, events: Any) -> None:
    server.push(
        fake.message("Reading the code.", fake.tool("read_file", path="src/app.py")),
        fake.message(fake.tool("write_file", path="NOTES.md", content="main returns 1\n")),
        fake.message(fake.tool("run_command", command="python -c \"print('checks ok')\"")),
        fake.complete("revise", "main should return 2", verdict="REVISE",
                      issues=[{"severity": "major", "description": "wrong value", "file": "src/app.py"}]),
    )
    result = make_agent().run(project.request())

    assert result.outcome == "revise"
    assert result.summary == "main should return 2"
    assert result.data == {"verdict": "REVISE",
                           "issues": [{"severity": "major", "description": "wrong value", "file": "src/app.py"}]}
    assert (project.root / "NOTES.md").read_text() == "main returns 1\n"
    read, wrote, ran = (fake.tool_results(server.bodies[i])[0] for i in (1, 2, 3))
    assert "def main()" in read["content"]
    assert not read["is_error"]
    assert "wrote NOTES.md" in wrote["content"]
    assert "checks ok" in ran["content"]
    assert "exit code 0" in ran["content"]
    tools = [e.data["tool"] for e in events if e.kind == "agent_tool"]
    assert tools == ["read_file", "write_file", "run_command", "complete_step"]
    assert [e.data["text"] for e in events if e.kind == "agent_text"] == ["Reading the code."]


def test_request_shape_and_first_turn(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.complete())
    make_agent(model="claude-opus-5-5").run(project.request(max_turns=3))
    body, headers = server.bodies[0], server.requests[0]["headers"]
    assert body["model"] == "claude-opus-5-5"
    assert body["stream"] is True
    assert headers["authorization"] == "Bearer sk-ant-test-SECRET123"
    assert {t["name"] for t in body["tools"]} >= {"read_file", "edit_file", "search_files", "complete_step"}
    assert "temperature" not in body
    assert "top_p" not in body
    context, workflow = body["messages"][0]["content"]
    assert '<file path=".specd/tasks/t/FEATURE.md">' in context["text"]
    assert "Add CSV export." in context["text"]
    assert "Allowed outcomes for complete_step: approve, revise, done" in workflow["text"]
    assert "# Review" in workflow["text"]
    assert str(project.root) in body["system"][0]["text"]


def test_step_model_override_wins(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.complete())
    make_agent(model="claude-opus-5-5").run(project.request(model="claude-haiku-5-5"))
    assert server.bodies[0]["model"] == "claude-haiku-5-5"


def test_edit_list_and_search(project: Any, server: Any, make_agent: Any) -> None:
    server.push(
        fake.message(fake.tool("edit_file", path="src/app.py", old_string="return 1", new_string="return 2"),
                     fake.tool("edit_file", path="src/app.py", old_string="nope", new_string="x"),
                     fake.tool("list_files", pattern="**/*.py"),
                     fake.tool("search_files", regex=r"return \d")),
        fake.complete(),
    )
    make_agent().run(project.request())
    edit, missing, listed, searched = fake.tool_results(server.bodies[1])
    assert (project.root / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert not edit["is_error"]
    assert missing["is_error"]
    assert "occurs 0 times" in missing["content"]
    assert listed["content"] == "src/app.py"
    assert searched["content"] == "src/app.py:2:     return 2"


def test_max_turns_fails_and_keeps_transcript(project: Any, server: Any, make_agent: Any) -> None:
    server.push(*[fake.message(fake.tool("list_files", pattern="*")) for _ in range(2)])
    with pytest.raises(AgentFailed, match="within 2 turns") as failure:
        make_agent().run(project.request(max_turns=2))
    assert failure.value.transcript is not None
    assert failure.value.transcript.is_file()
    assert failure.value.usage.output_tokens > 0


def test_transcript_and_conversation_files(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")), fake.complete("approve", "fine"))
    result = make_agent().run(project.request())
    run_dir = project.task_dir / "transcripts" / "run-1"
    assert result.transcript == run_dir / "001-review.jsonl"
    records = [json.loads(line) for line in result.transcript.read_text().splitlines()]
    assert [r["type"] for r in records] == ["request", "response", "tool", "request", "response", "tool",
                                            "complete"]
    saved = json.loads((run_dir / "review.conversation.json").read_text())
    assert saved["status"] == "closed"
    assert len(saved["messages"]) == 5
    # A hook's transcript gets the next number.
    server.push(fake.complete())
    hook = make_agent().run(project.request(kind="hook", conversation="hook-1"))
    assert hook.transcript == run_dir / "002-review-hook.jsonl"


def test_inline_hook_continues_the_step_conversation_and_subagent_starts_fresh(
    project: Any, server: Any, make_agent: Any
) -> None:
    agent = make_agent()
    server.push(fake.message(fake.tool("read_file", path="src/app.py")), fake.complete("approve"))
    agent.run(project.request(conversation="main.review.-.v1"))
    hook = {"kind": "hook", "outcomes": ("done", "fail"), "workflow": project.root / "hooks" / "post-review.md",
            "prompt": "# Post-review hook\nCheck the review."}
    server.push(fake.complete("done", "hook ok"))
    inline = agent.run(project.request(conversation="main.review.-.v1", **hook))
    messages = server.bodies[-1]["messages"]
    assert inline.outcome == "done"
    assert len(messages) == 5  # the step's four turns plus its closing tool result, then the hook's workflow
    assert "def main()" in json.dumps(messages)
    assert "# Post-review hook" in json.dumps(messages[-1])

    server.push(fake.complete("done", "sub ok"))
    agent.run(project.request(conversation="main.review.-.v1.post-hook", **hook))
    fresh = server.bodies[-1]["messages"]
    assert len(fresh) == 1
    assert "# Post-review hook" in json.dumps(fresh)


def test_a_step_past_its_timeout_stops_between_turns(project: Any, server: Any, make_agent: Any) -> None:
    # The command sleeps longer than the whole step may take, so the next turn is never asked for.
    server.push(fake.message(fake.tool("run_command", command="python -c \"import time; time.sleep(1)\"")),
                fake.complete())
    with pytest.raises(AgentFailed, match=r"timed out after 0.5 s"):
        make_agent(allow_commands=["python -c*"]).run(project.request(timeout=0.5))
    assert len(server.bodies) == 1
