"""The claude_code backend, driving the real Claude Code CLI against the fake Messages API.

Each test runs `claude -p` for real (about a second each); the fake server
scripts what "the model" answers, and logs what Claude Code sent.
"""

from __future__ import annotations

import json
import os
from typing import Any

import fake_anthropic as fake
import pytest
from claude_cli import DUMMY_KEY, prompt_text, result_events

from specd.agents.base import AgentFailed, Budget, BudgetExhausted, Usage
from specd.agents.claude_code import make_claude_code
from specd.agents.claude_code.options import Options
from specd.events import Event

OAUTH_TOKEN = "sk-ant-oat01-SIGNEDIN-abcdefghijklmnop"
FOUNDRY_KEY = "foundry-key-0123456789abcdefABCDEF"


def report(outcome: str = "done", summary: str = "finished") -> fake.Reply:
    return fake.message(fake.tool("StructuredOutput", outcome=outcome, summary=summary))


def test_step_reports_outcome_usage_and_live_events(cc: Any, project: Any, server: Any,
                                                     events: list[Event]) -> None:
    (project.root / "notes.txt").write_text("hello\n")
    server.push(fake.message("Reading the notes first.", fake.tool("Read", file_path=str(project.root / "notes.txt"))),
                report("revise", "the tests are missing"))

    result = cc.run(project.request(model="claude-test-model", max_turns=7, outcomes=("approve", "revise")))

    assert (result.outcome, result.summary, result.reported) == ("revise", "the tests are missing", True)
    # specd's one schema reached Claude Code, which turned it into its StructuredOutput tool.
    tool = next(t for t in server.bodies[0]["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"]["properties"]["outcome"]["type"] == "string"
    assert "Review the work" in prompt_text(server.bodies[0])
    assert {body["model"] for body in server.bodies} == {"claude-test-model"}
    assert all(r["headers"]["x-api-key"] == DUMMY_KEY for r in server.requests if r["path"] != "/")
    # Cost and tokens are what Claude Code reported in its result event, read back from the transcript.
    [final] = result_events(result.transcript)
    assert result.usage.cost_usd == final["total_cost_usd"] > 0
    assert result.usage.input_tokens == sum(u["input_tokens"] for u in server.usages)
    assert result.usage.output_tokens == sum(u["output_tokens"] for u in server.usages)
    assert result.usage.cache_creation_input_tokens == sum(u["cache_creation_input_tokens"] for u in server.usages)
    assert result.data["session_id"] == final["session_id"]
    assert server.requests[-1]["headers"]["x-claude-code-session-id"] == final["session_id"]
    # What the live view shows, as it happened.
    shown = [(e.kind, e.data.get("tool"), e.data.get("summary") or e.data.get("text")) for e in events]
    assert ("agent_text", None, "Reading the notes first.") in shown
    assert ("agent_tool", "Read", str(project.root / "notes.txt")) in shown
    assert not any(e.data.get("tool") == "StructuredOutput" for e in events)


def test_no_structured_output_leaves_the_outcome_to_the_verdict_fallback(cc: Any, project: Any,
                                                                          server: Any) -> None:
    server.push(fake.message("I reviewed it."), fake.message("Still just text."))
    result = cc.run(project.request())
    assert (result.outcome, result.reported) == ("done", False)
    assert result.summary == "Still just text."


def test_inline_hook_continues_the_steps_session_and_subagent_hook_starts_fresh(cc: Any, project: Any,
                                                                                 server: Any) -> None:
    server.push(fake.message("Remember the codeword PELICAN-42."), report("approve"))
    step = cc.run(project.request(conversation="main.review.-.v1"))
    server.push(report("done", "hook ok"))
    hook = cc.run(project.request(kind="hook", conversation="main.review.-.v1", outcomes=("done", "fail"),
                                  prompt="# Post-review hook\nCheck the review."))

    inline = server.bodies[-1]
    assert "PELICAN-42" in json.dumps(inline["messages"])  # the step's earlier messages came along
    assert "Check the review." in prompt_text(inline)
    assert hook.data["session_id"] == step.data["session_id"]
    assert (hook.outcome, hook.summary) == ("done", "hook ok")

    server.push(report("done"))
    sub = cc.run(project.request(kind="hook", conversation="main.review.-.v1.post-hook", outcomes=("done", "fail"),
                                 prompt="# Subagent hook\nLook again."))
    assert "PELICAN-42" not in json.dumps(server.bodies[-1]["messages"])
    assert sub.data["session_id"] != step.data["session_id"]


def test_a_retried_step_starts_fresh_with_a_note_of_the_earlier_attempt(cc: Any, project: Any,
                                                                        server: Any) -> None:
    server.push(fake.message("First try: PELICAN-42."), report("approve"))
    first = cc.run(project.request(conversation="main.review.-.v1"))
    server.push(report("approve"))
    second = cc.run(project.request(conversation="main.review.-.v1", attempt=2))

    text = prompt_text(server.bodies[-1])
    assert "PELICAN-42" not in json.dumps(server.bodies[-1]["messages"])
    assert "attempt 2" in text
    assert first.data["session_id"] in text
    assert second.data["session_id"] != first.data["session_id"]


def test_max_turns_fails_the_step_with_a_one_line_reason(cc: Any, project: Any, server: Any) -> None:
    (project.root / "a.txt").write_text("a\n")
    server.push(fake.message(fake.tool("Read", file_path=str(project.root / "a.txt"))),
                fake.message(fake.tool("Read", file_path=str(project.root / "a.txt"))))
    with pytest.raises(AgentFailed) as caught:
        cc.run(project.request(max_turns=1))
    assert "turn limit" in caught.value.reason
    assert "max_turns" in caught.value.reason
    assert "\n" not in caught.value.reason
    [final] = result_events(caught.value.transcript)
    assert final["subtype"] == "error_max_turns"
    assert caught.value.usage.cost_usd == final["total_cost_usd"] > 0  # what was spent is still recorded


def test_denied_tools_fail_the_step_and_name_the_tools(cc: Any, project: Any, server: Any) -> None:
    server.push(fake.message(fake.tool("Bash", command="curl -s http://example.invalid/x", description="fetch")),
                report("approve", "looks fine"))
    with pytest.raises(AgentFailed) as caught:
        cc.run(project.request())
    reason = caught.value.reason
    assert "denied 1 tool call(s): Bash (curl -s http://example.invalid/x)" in reason
    assert "allowed_tools" in reason
    assert "\n" not in reason


def test_default_permissions_let_the_agent_edit_and_run_tests(cc: Any, project: Any, server: Any) -> None:
    (project.root / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    server.push(fake.message(fake.tool("Write", file_path=str(project.root / "src" / "new.py"), content="X = 1\n")),
                fake.message(fake.tool("Bash", command="python3 -m pytest --version", description="tests")),
                report("approve"))
    result = cc.run(project.request())
    assert result.outcome == "approve"
    assert (project.root / "src" / "new.py").read_text() == "X = 1\n"
    [bash] = fake.tool_results(server.bodies[-1])  # the Bash call's result, as the model saw it
    assert "requires approval" not in json.dumps(bash)
    assert "pytest" in json.dumps(bash)  # it ran: either pytest's version or python's "No module named pytest"


def test_budget_remainder_is_passed_and_its_stop_waits_for_a_human(cc: Any, project: Any, server: Any) -> None:
    (project.root / "a.txt").write_text("a\n")
    server.push(fake.message(fake.tool("Read", file_path=str(project.root / "a.txt"))), report("approve"))
    budget = Budget(max_cost_usd=0.5, run_spent=Usage(cost_usd=0.499999))
    with pytest.raises(BudgetExhausted) as caught:
        cc.run(project.request(budget=budget))
    assert "budget" in caught.value.reason
    assert caught.value.usage.cost_usd > 0
    argv = json.loads(caught_argv(project))["argv"]
    assert argv[argv.index("--max-budget-usd") + 1] == "0.000001"


def test_an_exhausted_budget_is_refused_before_claude_starts(cc: Any, project: Any, server: Any) -> None:
    budget = Budget(max_cost_usd=1.0, run_spent=Usage(cost_usd=1.0))
    with pytest.raises(BudgetExhausted, match="run cost budget reached"):
        cc.run(project.request(budget=budget))
    assert server.requests == []


def test_the_transcript_is_redacted(cc: Any, project: Any, server: Any) -> None:
    server.push(fake.message(f"The key is {DUMMY_KEY}, and sk-ant-api03-abcdefghijklmnop too."), report("approve"))
    result = cc.run(project.request())
    text = result.transcript.read_text()
    assert DUMMY_KEY not in text
    assert "sk-ant-api03-abcdefghijklmnop" not in text
    assert "[REDACTED]" in text


def caught_argv(project: Any) -> str:
    """The first line of the newest transcript: the argv specd gave Claude Code."""
    newest = max((project.task_dir / "transcripts").rglob("*.jsonl"))
    return newest.read_text().splitlines()[0]


def test_an_api_error_is_one_readable_line(cc: Any, project: Any, server: Any) -> None:
    server.push(fake.error(400))
    with pytest.raises(AgentFailed) as caught:
        cc.run(project.request())
    assert caught.value.reason == "Claude Code failed (error): API Error: 400 fake failure"
    assert caught.value.transcript is not None
    assert result_events(caught.value.transcript)[0]["api_error_status"] == 400


def test_claude_refusing_its_arguments_is_one_line_from_its_stderr(cc: Any, project: Any, server: Any) -> None:
    agent = make_claude_code(None, {"extra_args": ["--no-such-flag"]}, cc.ctx)
    with pytest.raises(AgentFailed) as caught:
        agent.run(project.request())
    reason = caught.value.reason
    assert reason.startswith("Claude Code exited with status 1 before reporting a result:")
    assert "--no-such-flag" in reason
    assert "\n" not in reason
    assert server.bodies == []


def test_in_the_jail_claude_code_cannot_write_specds_machinery(cc: Any, project: Any, server: Any) -> None:
    """Claude Code's own permissions allow edits in the project; the jail keeps specd's machinery out of reach."""
    pipeline = project.root / ".specd" / "pipeline.json"
    pipeline.write_text('{"keep": true}')
    (project.root / ".specd" / "hooks").mkdir()
    hook = project.root / ".specd" / "hooks" / "pre-review.md"
    config = project.task_dir / "config.json"
    config.write_text('{"task_name": "t"}')
    (project.root / ".claude").mkdir()
    team = project.root / ".claude" / "settings.json"  # the team's own settings: read by Claude Code, bound read-only
    team.write_text('{"permissions": {"deny": ["Bash(rm:*)"]}}')
    mine = project.root / ".claude" / "settings.local.json"  # what your own next `claude` here would run
    writes = [fake.tool("Write", file_path=str(pipeline), content='{"hooks": "pwned"}'),
              fake.tool("Write", file_path=str(hook), content="# pwned\n"),
              fake.tool("Write", file_path=str(config), content="{}"),
              fake.tool("Write", file_path=str(mine), content='{"hooks": {"SessionStart": []}}')]
    server.push(fake.message(fake.tool("Read", file_path=str(pipeline))),  # Claude Code writes only what it read
                fake.message(fake.tool("Read", file_path=str(config))),
                *(fake.message(write) for write in writes),
                fake.message(fake.tool("Write", file_path=str(project.root / "src" / "ok.py"), content="OK = 1\n")),
                report("approve"))
    with pytest.raises(AgentFailed) as failed:  # the model was told no, and the step does not pass either
        cc.run(project.request())
    assert "tried to write specd's machinery" in failed.value.reason
    assert ".specd/pipeline.json" in failed.value.reason
    results = {r["tool_use_id"]: str(r["content"]).lower() for body in server.bodies for r in fake.tool_results(body)}
    refused = [results[write["id"]] for write in writes]
    # Read-only binds: a write is EROFS, and a rename over a bound file (Claude Code's atomic save) is EBUSY.
    # Told no by the deny rules at the time of the write, or, past them, by the jail's read-only binds.
    assert all(any(word in text for word in ("read-only file system", "resource busy", "denied by your permission"))
               for text in refused), refused
    assert pipeline.read_text() == '{"keep": true}'
    assert not hook.exists()
    assert config.read_text() == '{"task_name": "t"}'
    assert not mine.exists()
    assert team.read_text() == '{"permissions": {"deny": ["Bash(rm:*)"]}}'
    assert (project.root / "src" / "ok.py").read_text() == "OK = 1\n"


def test_claude_codes_commands_never_see_the_users_keys(cc: Any, project: Any, server: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by hand: what Claude Code's Bash prints goes to the model, and it inherited specd's whole
    environment. Now Claude Code gets only the keys it signs in with (and `env_allow`)."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "NEEDLEgithub0123456789abcdefABCDEF01")
    monkeypatch.setenv("DB_PASSWORD", "NEEDLEdbpassword")
    monkeypatch.setenv("DEPLOY_TOKEN", "NEEDLEallowed-deploy")
    monkeypatch.setenv("PLAIN_SETTING", "visible-setting")
    shell = fake.tool("Bash", command="env", description="show the environment")
    server.push(fake.message(shell), report("approve"))
    settings = {"allowed_tools": ["Bash"], "env_allow": ["DEPLOY_TOKEN"]}  # the pipeline's agent block
    cc.options = Options.from_settings(settings)
    cc.run(project.request(settings=settings))
    [said] = [str(r["content"]) for body in server.bodies for r in fake.tool_results(body) if r["tool_use_id"]
              == shell["id"]]
    assert "PLAIN_SETTING=visible-setting" in said  # the command ran, with the ordinary environment
    assert "NEEDLEgithub" not in said
    assert "NEEDLEdbpassword" not in said
    assert "DEPLOY_TOKEN=NEEDLEallowed-deploy" in said  # env_allow: the user's choice
    assert all(r["headers"]["x-api-key"] == DUMMY_KEY for r in server.requests if r["path"] != "/")


@pytest.mark.parametrize(("variable", "secret", "header", "signed"), [
    ("ANTHROPIC_API_KEY", DUMMY_KEY, "x-api-key", DUMMY_KEY),
    # a Claude subscription's token (`claude setup-token`), sent as a bearer token
    ("CLAUDE_CODE_OAUTH_TOKEN", OAUTH_TOKEN, "authorization", f"Bearer {OAUTH_TOKEN}"),
    # Claude Code on Microsoft Foundry by key, its own base URL
    ("ANTHROPIC_FOUNDRY_API_KEY", FOUNDRY_KEY, "x-api-key", FOUNDRY_KEY),
], ids=["api-key", "setup-token", "foundry"])  # ids without the key: PYTEST_CURRENT_TEST is in the environment
def test_claude_codes_own_key_never_reaches_its_commands(cc: Any, project: Any, server: Any,
                                                          monkeypatch: pytest.MonkeyPatch, variable: str,
                                                          secret: str, header: str, signed: str) -> None:
    """Found by hand, as the model: Claude Code's Bash inherits its environment, so `env` (or its parent's
    /proc/PID/environ) put the API key in what the model reads. The jail now holds a stand-in, and specd's key
    guard signs the requests with the key on the way to the API."""
    from specd.system import jail

    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it)")
        pytest.skip("the key guard is part of the jail; bubblewrap is not available here")
    base = "ANTHROPIC_BASE_URL"
    if variable != "ANTHROPIC_API_KEY":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv(variable, secret)
    if variable == "ANTHROPIC_FOUNDRY_API_KEY":
        base = "ANTHROPIC_FOUNDRY_BASE_URL"
        monkeypatch.setenv("CLAUDE_CODE_USE_FOUNDRY", "1")
        monkeypatch.setenv(base, server.url)
        monkeypatch.delenv("ANTHROPIC_BASE_URL")
    look = "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null"
    shell = fake.tool("Bash", command=look, description="look for the key")
    server.push(fake.message(shell), report("approve"))
    settings = {"allowed_tools": ["Bash"]}
    cc.options = Options.from_settings(settings)
    cc.run(project.request(settings=settings))
    [said] = [str(r["content"]) for body in server.bodies for r in fake.tool_results(body) if r["tool_use_id"]
              == shell["id"]]
    assert f"{variable}=specd-stand-in-" in said  # the command ran, and saw the stand-in
    assert f"{base}=http://127.0.0.1:" in said
    assert server.url.rpartition(":")[2] not in said  # the guard's port, never the API's
    assert secret not in said
    assert secret[8:] not in said  # not even its tail
    calls = [r for r in server.requests if r["path"] != "/"]
    assert len(calls) >= 2  # the step's two turns, each signed with the real key on the way out
    assert all(r["headers"][header] == signed for r in calls)