"""End to end: `specd continue TASK --auto --agent anthropic` against the fake Messages API.

specd runs as a real subprocess with ANTHROPIC_BASE_URL pointing at the fake
server (a thread in this process) and ANTHROPIC_API_KEY=sk-ant-test-SECRET123.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import forked
import pytest

SECRET = "sk-ant-test-SECRET123"
PRICE = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}}
REVIEW = "---\ndescription: review\noutcomes: [approve, revise]\n---\n\n# Review\n\nReview src/app.py.\n"
WORK = "---\ndescription: work\n---\n\n# {name}\n\nDo the {name} work.\n"
# The same routing through the command agent: review says revise, everything else done.
CMD_AGENT = (
    "import json, os\n"
    "outcome = 'revise' if os.environ['SPECD_STEP'] == 'review' else 'done'\n"
    "open(os.environ['SPECD_RESULT'], 'w').write(json.dumps({'outcome': outcome, 'summary': 'ok'}))\n"
)


class E2E:
    def __init__(self, root: Path, server: Any) -> None:
        self.root, self.server = root, server
        specd = root / ".specd"
        (specd / "workflows").mkdir(parents=True)
        (specd / "workflows" / "review.md").write_text(REVIEW)
        for name in ("fix", "final"):
            (specd / "workflows" / f"{name}.md").write_text(WORK.format(name=name))
        pipeline = {"schema_version": "1.0", "mode": "auto",
                    "agent": {"backend": "anthropic", "allow_commands": ["python -c*"], "pricing": PRICE},
                    "pipelines": {"main": [
                        {"name": "review", "workflow": "review.md", "outcomes": {"revise": "fix", "approve": "final"}},
                        {"name": "fix", "workflow": "fix.md", "outcomes": {"done": "final"}},
                        {"name": "final", "workflow": "final.md"}]}}
        (specd / "pipeline.json").write_text(json.dumps(pipeline))
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 1\n")
        self.env = {**os.environ, "ANTHROPIC_API_KEY": SECRET, "ANTHROPIC_BASE_URL": server.url,
                    "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}
        self.env.pop("ANTHROPIC_AUTH_TOKEN", None)
        assert self.specd("new", "t", "--description", "Fix main").returncode == 0

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=120)

    def cont(self, *extra: str, agent: str = "anthropic") -> subprocess.CompletedProcess[str]:
        return self.specd("continue", "t", "--auto", "--agent", agent, *extra)

    def status(self) -> dict[str, Any]:
        result = self.specd("status", "t", "--json")
        assert result.returncode == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    def steps(self) -> list[tuple[str, str]]:
        return [(h["step"], h["outcome"]) for h in self.status()["history"]]


@pytest.fixture
def e2e(tmp_path: Path, server: Any) -> E2E:
    return E2E(tmp_path / "proj", server)


def _full_script() -> list[Any]:
    return [
        fake.message(fake.tool("read_file", path="src/app.py")),
        fake.message(fake.tool("write_file", path="REVIEW-NOTES.md", content="main returns 1")),
        fake.message(fake.tool("run_command", command="python -c \"print('tests pass')\"")),
        fake.complete("revise", "main must return 2"),
        fake.message(fake.tool("edit_file", path="src/app.py", old_string="return 1", new_string="return 2")),
        fake.complete("done", "fixed"),
        fake.complete("done", "wrapped up"),
    ]


def _no_secret_under_specd(root: Path) -> None:
    leaks = [p for p in (root / ".specd").rglob("*") if p.is_file() and "SECRET123" in p.read_text(errors="replace")]
    assert leaks == []


def test_tool_loop_routes_like_the_command_agent(e2e: E2E, tmp_path: Path) -> None:
    e2e.server.push(*_full_script())
    result = e2e.cont()
    assert result.returncode == 0, result.stderr
    assert e2e.status()["status"] == "COMPLETE"
    anthropic_route = e2e.steps()
    assert anthropic_route == [("review", "revise"), ("fix", "done"), ("final", "done")]
    assert (e2e.root / "REVIEW-NOTES.md").read_text() == "main returns 1"
    assert "return 2" in (e2e.root / "src" / "app.py").read_text()
    _no_secret_under_specd(e2e.root)

    other = E2E(tmp_path / "cmd-proj", e2e.server)
    script = tmp_path / "cmd_agent.py"
    script.write_text(CMD_AGENT)
    command = other.cont(agent=f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    assert command.returncode == 0, command.stderr
    assert [step for step, _ in other.steps()] == [step for step, _ in anthropic_route]


def test_status_reports_tokens_and_cost_the_server_reported(e2e: E2E) -> None:
    e2e.server.push(*_full_script())
    assert e2e.cont().returncode == 0
    usages = e2e.server.usages
    per_step = {"review": usages[0:4], "fix": usages[4:6], "final": usages[6:7]}
    history = {h["step"]: h["usage"] for h in e2e.status()["history"]}
    for step, calls in per_step.items():
        for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            assert history[step][key] == sum(c[key] for c in calls), (step, key)
        cost = sum(c["input_tokens"] * 3 + c["output_tokens"] * 15 + c["cache_creation_input_tokens"] * 3.75
                   + c["cache_read_input_tokens"] * 0.3 for c in calls) / 1e6
        assert history[step]["cost_usd"] == pytest.approx(cost, abs=1e-5)


def test_overloaded_twice_then_success(e2e: E2E) -> None:
    e2e.server.push(fake.error(529), fake.error(529), *_full_script())
    result = e2e.cont()
    assert result.returncode == 0, result.stderr
    assert e2e.status()["status"] == "COMPLETE"


def test_persistent_500_blocks_and_continue_resumes_the_step(e2e: E2E) -> None:
    script = _full_script()
    e2e.server.push(script[0])
    e2e.server.responder = lambda body: fake.error(500)
    blocked = e2e.cont()
    assert blocked.returncode == 1, blocked.stderr
    status = e2e.status()
    assert status["status"] == "BLOCKED"
    transcripts = list((e2e.root / ".specd" / "tasks" / "t" / "transcripts").rglob("*-review.jsonl"))
    assert len(transcripts) == 1
    assert "read_file" in transcripts[0].read_text()

    e2e.server.responder = None
    e2e.server.push(*script[1:])
    calls_before = len(e2e.server.requests)
    resumed = e2e.cont()
    assert resumed.returncode == 0, resumed.stderr
    assert e2e.status()["status"] == "COMPLETE"
    first_after = e2e.server.bodies[calls_before]
    assert "def main()" in json.dumps(first_after["messages"])  # the saved read_file result came back
    _no_secret_under_specd(e2e.root)


def test_max_cost_stops_before_the_budget_is_passed_and_raising_it_completes(e2e: E2E) -> None:
    e2e.server.push(*_full_script())
    stopped = e2e.cont("--max-cost", "0.012")
    assert stopped.returncode == 3, stopped.stderr
    status = e2e.status()
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert "budget would be passed" in status["reason"]
    spent = status["usage"]["cost_usd"]
    calls = len(e2e.server.requests)
    assert 0 < calls < 7, stopped.stderr  # some calls were made, then one was refused before it was sent
    assert 0 < spent <= 0.012  # a cap: the run never spent past it

    resumed = e2e.cont("--max-cost", "10")
    assert resumed.returncode == 0, resumed.stderr
    assert e2e.status()["status"] == "COMPLETE"
    assert len(e2e.server.requests) == 7
    assert calls < 7
    _no_secret_under_specd(e2e.root)


def test_the_budget_hint_followed_to_the_letter_makes_the_refused_call(e2e: E2E) -> None:
    """Doubling a tiny budget would still be below the next call's estimate: the hint covers that call."""
    e2e.server.push(*_full_script())
    stopped = e2e.cont("--max-cost", "0.000001")
    assert stopped.returncode == 3, stopped.stderr
    status = e2e.status()
    assert "budget would be passed" in status["reason"]
    assert e2e.server.requests == []  # refused before it was sent
    hint = status["hint"].split()
    assert hint[:3] == ["specd", "continue", status["task"]]
    assert hint[3] == "--max-cost"
    raised = float(hint[4])
    assert raised > 0.000001 * 2  # more than doubling: the estimate of the refused call is covered
    e2e.cont("--max-cost", hint[4])
    assert len(e2e.server.requests) >= 1  # the call the budget refused was made this time
