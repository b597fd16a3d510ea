"""Issue 33, item 4: Claude Code's cached prefix survives from one step to the next.

Everything specd controls in a ``claude -p`` request is the same at every step: one ``--json-schema`` (so
the StructuredOutput tool, and with it the tool list that opens the prefix, never changes), no appended
system line, and no git snapshot in Claude Code's system prompt (specd commits between steps). The real CLI
runs discuss -> research -> plan against the fake Messages API, whose cache bills as the API does; the
second and third steps' first requests must read their tool list and system prompt from the cache.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import fake_anthropic as fake
from claude_cli import claude_binary, claude_env, claude_specd, prompt_text, schema_outcomes

HEADER = re.compile(r"# specd step: (\S+) \(pipeline")
STEPS = ["discuss", "research", "plan"]


def model(body: dict[str, Any]) -> fake.Reply:
    step = HEADER.findall(prompt_text(body))[-1]
    outcome = schema_outcomes(body)[0]
    return fake.message(fake.text(f"Working on {step}."),
                        fake.tool("StructuredOutput", outcome=outcome, summary=f"{step} {outcome}"))


def test_later_steps_read_the_tool_list_and_system_prompt_from_the_cache(tmp_path: Path) -> None:
    binary = claude_binary()
    root = tmp_path / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    # A research step with outcomes of its own: a schema that listed them would change the tool list here.
    (root / ".specd" / "workflows" / "research.md").write_text(
        "---\ndescription: research\noutcomes: [done, more]\n---\n\n# Research\n\nRead the code.\n")
    (root / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", "mode": "auto", "agent": {"backend": "claude_code"},
        "pipelines": {"main": [{"name": step, "workflow": f"{step}.md"} for step in STEPS]}}))
    with fake.FakeAnthropic(responder=model) as server:
        specd = claude_specd(root, claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary))
        assert specd("new", "t", "--description", "Add CSV export").returncode == 0
        run = specd("continue", "t", "--auto", "--agent", "claude_code")
        assert run.returncode == 0, run.stdout + run.stderr
        bodies, log = server.bodies, server.cache.log

    firsts: dict[str, int] = {}
    for index, body in enumerate(bodies):
        firsts.setdefault(HEADER.findall(prompt_text(body))[-1], index)
    assert list(firsts) == STEPS
    assert schema_outcomes(bodies[firsts["research"]]) == ["done", "more"]
    # The same tool list at every step, and a request specd shaped the same way: no appended system line.
    tools = {json.dumps(body["tools"], sort_keys=True) for body in bodies}
    assert len(tools) == 1
    assert all("You are running a step of a specd pipeline" not in json.dumps(body.get("system")) for body in bodies)
    assert all("gitStatus" not in json.dumps(body) and "Current branch" not in json.dumps(body) for body in bodies)
    first = log[firsts["discuss"]]
    assert first["read"] == 0
    assert first["written"] > first["tools"]
    for step in STEPS[1:]:
        entry = log[firsts[step]]
        assert entry["read"] >= entry["tools"] > 0, (step, entry)  # the tool list, and the system after it
        assert entry["read"] >= 0.6 * entry["total"], (step, entry)
        assert entry["written"] < 0.2 * entry["total"], (step, entry)  # only the step's own prompt is new
