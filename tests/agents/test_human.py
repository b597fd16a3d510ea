"""Commands and questions: who approves and who answers, per mode."""

from __future__ import annotations

from typing import Any

import fake_anthropic as fake

from specd.agents.anthropic.toolbox import NO_HUMAN

MARKER_CMD = "touch marker.txt"


def test_auto_mode_refuses_unlisted_commands_and_answers_no_human(
    project: Any, server: Any, make_agent: Any, scripted_human: Any
) -> None:
    human = scripted_human(present=True, answers=["use CSV"])  # present, but auto mode must not ask
    server.push(
        fake.message(fake.tool("run_command", command=MARKER_CMD), fake.tool("ask_user", question="Which format?")),
        fake.complete(),
    )
    make_agent(human).run(project.request(mode="auto"))
    refused, answered = fake.tool_results(server.bodies[1])
    assert refused["is_error"]
    assert "not on the allowlist" in refused["content"]
    assert not (project.root / "marker.txt").exists()
    assert answered["content"] == NO_HUMAN
    assert "DECISIONS.md" in answered["content"]
    assert human.asked == []
    assert human.commands == []


def test_interactive_human_approves_and_answers(
    project: Any, server: Any, make_agent: Any, scripted_human: Any
) -> None:
    human = scripted_human(present=True, answers=["use CSV"], approve=True)
    server.push(
        fake.message(fake.tool("run_command", command=MARKER_CMD), fake.tool("ask_user", question="Which format?"),
                     fake.tool("run_command", command="pytest --version")),
        fake.complete(),
    )
    make_agent(human, allow_commands=["pytest*"]).run(project.request(mode="interactive"))
    ran, answered, _ = fake.tool_results(server.bodies[1])
    assert not ran["is_error"]
    assert (project.root / "marker.txt").exists()
    assert answered["content"] == "use CSV"
    assert human.asked == ["Which format?"]
    assert human.commands == [MARKER_CMD]  # the allowlisted one was not put to the human


def test_semi_auto_human_declines(project: Any, server: Any, make_agent: Any, scripted_human: Any) -> None:
    human = scripted_human(present=True, approve=False)
    server.push(
        fake.message(fake.tool("run_command", command=MARKER_CMD), fake.tool("ask_user", question="Format?")),
        fake.complete(),
    )
    make_agent(human).run(project.request(mode="semi-auto"))
    declined, unanswered = fake.tool_results(server.bodies[1])
    assert declined["is_error"]
    assert "declined" in declined["content"]
    assert not (project.root / "marker.txt").exists()
    assert unanswered["content"].startswith("The human gave no answer.")
