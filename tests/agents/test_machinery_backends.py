"""Issue 16, part 2, for the model-driven backends: the fake model tries to write specd's machinery.

- anthropic (the real client against the fake Messages API): its file tools refuse machinery paths,
  so the model writes a script and runs it through an allowlisted command, outside any bubblewrap;
- Claude Code (the real CLI against the fake API): its Write tool is denied the pipeline file at the
  time of the write, a write to /var/tmp is denied too, and an allowed `git diff --output=` that
  reaches the pipeline file anyway is undone after the step, which is BLOCKED.
Each time the pipeline file is as before, and a following run of another task runs nothing planted.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import forked
from claude_cli import claude_binary, claude_env, result_events

from specd.state.store import StateStore

WORKFLOW = "---\ndescription: the {name} step\n---\n\n# {name}\n\nDo the {name} work.\n"
BENIGN = "import os, sys\nsys.stdin.read()\n"


class Project:
    def __init__(self, tmp_path: Path, agent: dict[str, Any], env: dict[str, str]) -> None:
        self.root, self.harness = tmp_path / "proj", tmp_path / "harness"
        self.harness.mkdir()
        (self.root / ".specd" / "workflows").mkdir(parents=True)
        self.env = {**env, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
        self.git("init", "-q")
        self.git("config", "user.email", "t@example.com")
        self.git("config", "user.name", "T")
        for name in ("discuss", "plan"):
            (self.root / ".specd" / "workflows" / f"{name}.md").write_text(WORKFLOW.format(name=name))
        pipeline = {"schema_version": "1.0", "mode": "auto", "agent": agent, "pipelines": {"main": [
            {"name": "discuss", "workflow": "discuss.md"}, {"name": "plan", "workflow": "plan.md"}]}}
        (self.root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline, indent=2))
        (self.root / "notes.txt").write_text("first\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")
        (self.root / "notes.txt").write_text("second\n")  # so that `git diff` has something to write
        for task in ("a", "b"):
            assert self.specd("new", task).returncode == 0
        self.pipeline = (self.root / ".specd" / "pipeline.json").read_bytes()

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True, env=self.env)

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=300)

    def planted_run_hook(self) -> str:
        """A pipeline with a pre-step `run:` hook that leaves a marker when it runs."""
        data = json.loads(self.pipeline)
        data["hooks"] = {"pre-step": {"run": f"touch {self.harness / 'marker-run-hook'}"}}
        return json.dumps(data)

    def blocked(self, task: str) -> str:
        state = StateStore(self.root / ".specd" / "tasks" / task, task).load()
        assert state is not None
        assert state.status == "BLOCKED", state.reason
        return state.reason

    def then_another_task_runs_nothing_planted(self) -> None:
        (self.harness / "benign.py").write_text(BENIGN)
        agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.harness / 'benign.py'))}"
        other = self.specd("continue", "b", "--auto", "--agent", agent)
        assert other.returncode == 0, other.stdout + other.stderr
        assert not (self.harness / "marker-run-hook").exists()
        assert (self.root / ".specd" / "pipeline.json").read_bytes() == self.pipeline


def test_anthropic_agent_writing_the_pipeline_through_an_allowed_command(tmp_path: Path) -> None:
    settings = {"backend": "anthropic", "sandbox": "allowlist", "allow_commands": ["python3 attack.py"]}
    with fake.FakeAnthropic() as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        project = Project(tmp_path, settings, env)
        script = f"open('.specd/pipeline.json', 'w').write({project.planted_run_hook()!r})\n"
        server.push(
            fake.message(fake.tool("write_file", path=".specd/pipeline.json", content="{}")),
            fake.message(fake.tool("write_file", path="attack.py", content=script)),
            fake.message(fake.tool("run_command", command="python3 attack.py")),
            fake.complete("done", "discussed"),
        )
        run = project.specd("continue", "a", "--auto", "--agent", "anthropic")
        bodies = server.bodies

    assert run.returncode == 1, run.stdout + run.stderr
    refused = fake.tool_results(bodies[1])[0]
    assert refused.get("is_error")  # the file tool said no; the command is what got through
    ran = fake.tool_results(bodies[3])[0]
    assert "exit code 0" in str(ran["content"])
    reason = project.blocked("a")
    assert ".specd/pipeline.json (changed)" in reason
    assert (project.root / ".specd" / "pipeline.json").read_bytes() == project.pipeline
    project.then_another_task_runs_nothing_planted()


def test_claude_code_is_denied_the_machinery_and_the_outside_and_a_bash_write_is_undone(tmp_path: Path) -> None:
    binary = claude_binary()
    outside = Path("/var/tmp") / f"specd-test-{uuid.uuid4().hex}.txt"
    pipeline_path = tmp_path / "proj" / ".specd" / "pipeline.json"
    holder: dict[str, str] = {}
    acts = [("Read", {"file_path": str(pipeline_path)}),
            ("Write", {"file_path": str(pipeline_path), "content": "planted"}),
            ("Write", {"file_path": str(outside), "content": "outside"}),
            ("Bash", {"command": "git diff --output=.specd/pipeline.json", "description": "diff"})]
    results: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> fake.Reply:
        turn = sum(1 for message in body["messages"] if message["role"] == "assistant")
        results.extend(fake.tool_results(body))
        if turn < len(acts):
            name, args = acts[turn]
            if name == "Write" and args["content"] == "planted":
                args = {**args, "content": holder["planted"]}
            return fake.message(fake.tool(name, **args))
        return fake.message(fake.tool("StructuredOutput", outcome="done", summary="discussed"))

    with fake.FakeAnthropic(responder=model) as server:
        env = claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary)
        # Outside the jail (sandbox: false), so the deny rules and the check after the step are what stand.
        project = Project(tmp_path, {"backend": "claude_code", "sandbox": False}, env)
        holder["planted"] = project.planted_run_hook()
        run = project.specd("continue", "a", "--auto", "--agent", "claude_code")

    assert run.returncode == 1, run.stdout + run.stderr
    by_turn = [str(result.get("content")) for result in results]
    assert "denied by your permission settings" in by_turn[1]  # told no at the time of the write
    assert "haven't granted" in by_turn[2]
    assert not outside.exists()
    reason = project.blocked("a")
    assert ".specd/pipeline.json (changed)" in reason  # the Bash write got through, and was undone
    assert (project.root / ".specd" / "pipeline.json").read_bytes() == project.pipeline
    transcripts = sorted((project.root / ".specd/tasks/a/transcripts").rglob("*discuss*.jsonl"))
    denied = [d for event in result_events(transcripts[-1]) for d in event.get("permission_denials") or []]
    assert [d["tool_input"]["file_path"] for d in denied] == [str(outside)]
    project.then_another_task_runs_nothing_planted()
