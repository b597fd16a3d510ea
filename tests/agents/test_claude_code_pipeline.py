"""Acceptance: the built-in pipeline on a 2-phase task, run by the real Claude Code CLI.

`specd continue t --auto --agent claude_code` runs as a subprocess; each step
is a real `claude -p` against the fake server, whose responder plays the
model: it reads specd's prompt header from the request and reports an outcome
through Claude Code's StructuredOutput tool, answering `revise` to phase 01's
first review. A convention hook `.specd/hooks/post-review.md` (inline by
default) checks that an inline hook continues the review's own session.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import forked
import pytest
from claude_cli import claude_binary, claude_env, claude_specd, prompt_text, result_events, schema_outcomes

from specd.state.store import StateStore
from specd.system import jail

ROADMAP = "# Roadmap\n\n### Phase 1: Parser\n\nParse CSV.\n\n### Phase 2: Export\n\nWrite CSV.\n"
HOOK = "---\ndescription: check the review\n---\n\n# After review\n\nConfirm REVIEW.md was written.\n"
HEADER = re.compile(r"# specd (step|hook): (\S+) \(pipeline (\S+), (?:phase (\S+)|no phase)\)")


class Model:
    """The fake model: one reply per request, decided from the newest specd header in the conversation."""

    def __init__(self) -> None:
        self.revised = False
        self.seen: list[tuple[str, str, str | None]] = []  # (kind, step, phase) per request

    def __call__(self, body: dict[str, Any]) -> fake.Reply:
        kind, step, _, phase = HEADER.findall(prompt_text(body))[-1]
        self.seen.append((kind, step, phase or None))
        outcomes = schema_outcomes(body)
        outcome = "approve" if "approve" in outcomes else "done"
        if step == "review" and phase == "01" and not self.revised:
            self.revised, outcome = True, "revise"
        said = fake.text(f"Working on {kind} {step} {phase}.")
        return fake.message(said, fake.tool("StructuredOutput", outcome=outcome, summary=f"{step} {outcome}"))


@pytest.fixture
def model() -> Model:
    return Model()


def test_builtin_pipeline_on_two_phases_with_a_revise_loop(tmp_path: Path, model: Model) -> None:
    binary = claude_binary()
    root = tmp_path / "proj"
    (root / ".specd" / "hooks").mkdir(parents=True)
    (root / ".specd" / "hooks" / "post-review.md").write_text(HOOK)
    with fake.FakeAnthropic(responder=model) as server:
        env = claude_env(os.environ, url=server.url, home=tmp_path / "home", binary=binary)
        env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
        specd = claude_specd(root, env)

        assert specd("new", "t", "--description", "Add CSV export").returncode == 0
        task_dir = root / ".specd" / "tasks" / "t"
        (task_dir / "ROADMAP.md").write_text(ROADMAP)
        run = specd("continue", "t", "--auto", "--agent", "claude_code")
        assert run.returncode == 0, run.stdout + run.stderr
        status = json.loads(specd("status", "t", "--json").stdout)

    state = StateStore(task_dir, "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    steps = [row for row in status["history"] if row["kind"] == "step"]
    rows = [(row["step"], row["phase"], row["outcome"]) for row in steps]
    phase1 = [(step, outcome) for step, phase, outcome in rows if phase == "01"]
    # revise ends phase 01's iteration (its fix phase, had the model written one, would run next): 01 is not
    # executed again
    assert phase1 == [("plan", "done"), ("execute", "done"), ("review", "revise"), ("revise", "done")]
    assert [step for step, phase, _ in rows if phase == "02"] == ["plan", "execute", "review"]
    assert [step for step, phase, _ in rows if phase is None] == ["discuss", "research", "plan"]

    # Each step's cost is exactly what Claude Code reported in its result event (kept in the transcript),
    # and each step ran in a session of its own, recorded in its history row.
    recorded = [row for row in state.history if row["kind"] == "step"]
    assert len(recorded) == len(steps) == 10
    for shown, row in zip(steps, recorded, strict=True):
        [final] = result_events(Path(row["transcript"]))
        assert shown["usage"]["cost_usd"] == final["total_cost_usd"] > 0
        assert row["session_id"] == final["session_id"]
    assert len({row["session_id"] for row in recorded}) == 10
    assert status["usage"]["cost_usd"] == pytest.approx(sum(row["usage"]["cost_usd"]
                                                            for row in status["history"]), abs=1e-5)

    # Every review was followed by its inline post-review hook, which resumed the review's session:
    # its request carried the review's own prompt and answer.
    hooks = [b for b in server.bodies if HEADER.findall(prompt_text(b))[-1][0] == "hook"]
    assert len(hooks) == 2
    for body in hooks:
        steps = [m[1] for m in HEADER.findall(prompt_text(body))]
        assert steps == ["review", "review"]  # the step's prompt, then the hook's, in one conversation
        assert "Working on step review" in json.dumps(body["messages"])

    # Claude Code kept its sessions in the task's own copy of its config, never in the user's HOME: in the jail
    # HOME is fresh and empty, and the copy (under transcripts/, never committed) is what --resume read.
    if jail.active():
        assert not (tmp_path / "home" / ".claude" / "projects").exists()
        sessions = list((task_dir / "transcripts" / ".agent" / "claude_code" / "projects").rglob("*.jsonl"))
        assert {path.stem for path in sessions} >= {row["session_id"] for row in recorded}


ONE_STEP = "---\ndescription: review\noutcomes: [approve, revise]\n---\n\n# Review\n\nReview src/app.py.\n"


class OneStep:
    """A project whose pipeline is one `review` step, run with `--agent claude_code`."""

    def __init__(self, root: Path, server: fake.FakeAnthropic, home: Path, agent: dict[str, Any]) -> None:
        self.root = root
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / ".specd" / "workflows" / "review.md").write_text(ONE_STEP)
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 1\n")
        pipeline = {"schema_version": "1.0", "mode": "auto", "agent": {"backend": "claude_code", **agent},
                    "pipelines": {"main": [{"name": "review", "workflow": "review.md"}]}}
        (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
        self.env = claude_env(os.environ, url=server.url, home=home, binary=claude_binary())
        assert self.specd("new", "t", "--description", "Review main").returncode == 0
        self.task_dir = root / ".specd" / "tasks" / "t"

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=300)

    def status(self) -> Any:
        return json.loads(self.specd("status", "t", "--json").stdout)


def test_max_turns_blocks_the_step_with_a_one_line_reason(tmp_path: Path) -> None:
    with fake.FakeAnthropic() as server:
        project = OneStep(tmp_path / "proj", server, tmp_path / "home", {"max_turns": 1})
        app = str(project.root / "src" / "app.py")
        server.push(fake.message(fake.tool("Read", file_path=app)), fake.message(fake.tool("Read", file_path=app)))
        run = project.specd("continue", "t")
        status = project.status()
    assert run.returncode == 1, run.stderr
    assert status["status"] == "BLOCKED"
    assert "turn limit (" in status["reason"]
    assert "max_turns" in status["reason"]
    assert "\n" not in status["reason"]
    assert "Traceback" not in run.stderr


def test_denied_tools_block_the_step_and_say_which(tmp_path: Path) -> None:
    with fake.FakeAnthropic() as server:
        project = OneStep(tmp_path / "proj", server, tmp_path / "home", {"allowed_tools": ["Read"]})
        server.push(fake.message(fake.tool("Bash", command="pytest -q", description="run the tests")),
                    fake.message(fake.tool("StructuredOutput", outcome="approve", summary="fine")))
        run = project.specd("continue", "t")
        status = project.status()
    assert run.returncode == 1
    assert status["status"] == "BLOCKED"
    assert "denied 1 tool call(s): Bash (pytest -q)" in status["reason"]
    assert "denied 1 tool call(s): Bash (pytest -q)" in run.stdout + run.stderr


def test_a_budget_stop_waits_for_a_human_and_continue_resumes(tmp_path: Path) -> None:
    with fake.FakeAnthropic() as server:
        project = OneStep(tmp_path / "proj", server, tmp_path / "home", {})
        app = str(project.root / "src" / "app.py")
        server.push(fake.message(fake.tool("Read", file_path=app)),
                    fake.message(fake.tool("StructuredOutput", outcome="approve", summary="fine")))
        stopped = project.specd("continue", "t", "--max-cost", "0.000001")
        waiting = project.status()
        server.push(fake.message(fake.tool("StructuredOutput", outcome="approve", summary="fine")))
        resumed = project.specd("continue", "t", "--max-cost", "100")
        done = project.status()
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert waiting["status"] == "WAITING_FOR_HUMAN"
    assert "budget" in waiting["reason"]
    assert waiting["usage"]["cost_usd"] > 0  # what Claude Code spent before it stopped is counted
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert done["status"] == "COMPLETE"
    assert [(row["step"], row["outcome"]) for row in done["history"]] == [("review", "approve")]


def _claude_pids(root: Path) -> list[int]:
    """Processes running `claude -p --output-format stream-json` in the project (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            same = (proc / "cwd").resolve() == root.resolve()
        except (OSError, ValueError):
            continue
        if same and b"stream-json" in cmdline:
            found.append(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc to find processes")
def test_ctrl_c_stops_claude_with_the_run(tmp_path: Path) -> None:
    with fake.FakeAnthropic() as server:
        project = OneStep(tmp_path / "proj", server, tmp_path / "home", {})
        server.push(fake.Reply(blocks=[fake.text("slow")], stop_reason="end_turn", delay=120))
        run = subprocess.Popen([sys.executable, "-m", "specd", "--project", str(project.root), "continue", "t"],
                               env=project.env, cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL)
        try:
            for _ in range(1200):  # wait (up to a generous 120 s) until Claude Code is mid-call
                if server.bodies:
                    break
                time.sleep(0.1)
            assert server.bodies, "Claude Code never called the fake server"
            claude = _claude_pids(project.root)
            assert claude
            run.send_signal(signal.SIGINT)  # as Ctrl-C at the terminal would
            run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
        status = project.status()
    assert run.returncode == 130
    assert status["status"] == "ABORTED"
    assert [pid for pid in claude if _running(pid)] == []


def _running(pid: int) -> bool:
    # A zombie has stopped; it may linger as this test process's child when specd's jail (bwrap) leaves it
    # orphaned and this process has become a subreaper in an earlier test.
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) not in ("Z", "X")
    except (OSError, IndexError):
        return False
