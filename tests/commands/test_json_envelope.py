"""Every verb's --json output, success and failure, through the real CLI, against schemas/envelope.schema.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked
import pytest
from brain_harness import Harness
from jsonschema import Draft202012Validator

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA)


def envelope(h: Harness, *args: str, code: int, project: Path | None = None,
             cwd: Path | None = None) -> dict[str, Any]:
    """Run `specd [--project P] ARGS --json`; the one envelope (or a stream's last line), checked."""
    argv = [sys.executable, "-m", "specd", "--project", str(project or h.root), *args, "--json"]
    result = forked.run(argv, env=h.env, cwd=cwd or h.root, timeout=120)
    assert result.returncode == code, (args, result.stdout, result.stderr)
    try:
        data = json.loads(result.stdout)
    except ValueError:  # a streaming verb: event lines, each JSON, then the envelope
        lines = result.stdout.strip().splitlines()
        assert all(isinstance(json.loads(line), dict) for line in lines)
        data = json.loads(lines[-1])
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert errors == [], (args, data)
    assert data["ok"] is (code == 0)
    if code:
        assert data["error"]["code"] == code
        assert data["error"]["message"]
    return dict(data)


@pytest.fixture
def two_steps(h: Harness) -> Harness:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"},
                         {"name": "b", "workflow": "w.md", "pause_in_semi_auto": True}]})
    return h


def test_init_new_pipeline_hooks_status(two_steps: Harness, tmp_path: Path) -> None:
    h = two_steps
    assert envelope(h, "init", code=0)["task"] is None
    envelope(h, "init", "--pipeline", "xml", code=2)  # a click usage error is an envelope too
    made = envelope(h, "new", "t", code=0)
    assert (made["task"], made["created"]) == ("t", ".specd/tasks/t")
    assert envelope(h, "new", "Not A Slug", code=2)["task"] == "Not A Slug"
    assert envelope(h, "pipeline", "validate", code=0)["steps"] == 2
    assert "missing.json" in envelope(h, "pipeline", "validate", "missing.json", code=2)["error"]["message"]
    assert [p["name"] for p in envelope(h, "pipeline", "show", code=0)["pipelines"]["main"]] == ["a", "b"]
    broken = tmp_path / "broken"
    (broken / ".specd").mkdir(parents=True)
    (broken / ".specd" / "pipeline.json").write_text("{ not json", encoding="utf-8")
    envelope(h, "pipeline", "show", code=2, project=broken)
    assert {r["step"] for r in envelope(h, "hooks", code=0)["hooks"]} <= {"a", "b", "*"}
    assert "'zzz'" in envelope(h, "hooks", "--step", "zzz", code=2)["error"]["message"]
    assert [r["task"] for r in envelope(h, "status", code=0)["tasks"]] == ["t"]
    one = envelope(h, "status", "t", code=0)
    assert (one["task"], one["status"], one["progress"]) == ("t", "NOT_STARTED", [1, 2])
    assert "did you mean 't'" in envelope(h, "status", "tt", code=2)["error"]["message"]
    envelope(h, "status", code=2, project=tmp_path / "nowhere")


def test_the_verbs_that_answer_run_and_control(two_steps: Harness) -> None:
    h = two_steps
    agent = ("--agent", h.agent_spec())
    for task in ("t", "t2", "t3"):
        h.new(task)
    waiting = envelope(h, "continue", "t", "--semi-auto", *agent, code=3)  # end of input at b's gate
    assert (waiting["task"], waiting["status"]) == ("t", "WAITING_FOR_HUMAN")
    assert envelope(h, "reject", "t", "--note", "again", code=0)["answer"] == "reject"
    envelope(h, "reject", "t", code=2)  # --note is required
    envelope(h, "continue", "t", code=3)
    assert envelope(h, "continue", "tt", code=2)["task"] == "tt"  # an error still names the task asked about
    assert envelope(h, "skip", "t", code=0)["answer"] == "skip"
    envelope(h, "skip", "nope", code=2)
    assert envelope(h, "continue", "t", code=0)["status"] == "COMPLETE"
    envelope(h, "approve", "t", code=2)  # nothing waits
    envelope(h, "continue", "t2", "--semi-auto", *agent, code=3)
    assert envelope(h, "approve", "t2", code=0)["said"]
    assert envelope(h, "cancel", "t2", code=0)["status"] == "CANCELLED"
    envelope(h, "cancel", "nope", code=2)
    assert envelope(h, "logs", "t", code=0)["events"] > 0
    assert "did you mean 'a'" in envelope(h, "logs", "t", "--step", "aa", code=2)["error"]["message"]
    envelope(h, "rerun", "t", "--from", "a", "--auto", code=0)
    assert "did you mean 'b'" in envelope(h, "rerun", "t", "--from", "bb", code=2)["error"]["message"]
    h.cues(**{"step:a": {"exit": 1}})
    assert envelope(h, "continue", "t3", "--auto", *agent, code=1)["status"] == "BLOCKED"
    h.cues()
    assert envelope(h, "retry", "t3", code=0)["status"] == "COMPLETE"
    envelope(h, "retry", "t3", code=2)  # it has not failed


def test_doctor_and_demo(h: Harness, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(h.root)], check=True)
    for key, value in (("user.name", "T"), ("user.email", "t@example.com")):
        subprocess.run(["git", "-C", str(h.root), "config", key, value], check=True)
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"backend": "command", "command": "true"})
    assert envelope(h, "doctor", code=0)["checks"]
    (h.root / ".specd" / "pipeline.json").write_text("{ not json", encoding="utf-8")
    assert envelope(h, "doctor", code=1)["error"]["code"] == 1
    done = envelope(h, "demo", "--dir", str(tmp_path / "demo"), code=0, cwd=tmp_path)
    assert (done["task"], done["status"]) == ("word-count", "COMPLETE")
    envelope(h, "demo", "--dir", str(tmp_path / "demo"), code=2, cwd=tmp_path)  # not empty any more

