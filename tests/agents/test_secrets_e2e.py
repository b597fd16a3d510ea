"""Acceptance: secrets in the environment reach no file specd writes, no commit, and none of its output.

A command agent echoes them into its summary, extra result fields, its log and
a task document; `run:` hooks print them (one of them fails, so a CHANGELOG
entry is written); then the fake model prints them through the anthropic agent.
The task documents the agents wrote on purpose hold the values: each step is held
for them (issue 28: no secret in a commit), naming the file and the variables, and
approved here; they are then the user's business and are left out of the check.
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

from specd.state.store import StateStore

MARKERS = {"ANTHROPIC_API_KEY": "sk-ant-MARKERant-7Qx2", "AWS_SECRET_ACCESS_KEY": "MARKERaws9Lk2Pz4Tn8",
           "GITHUB_TOKEN": "MARKERgh5Wq3Vb7Yr1", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/MARKERslack42"}
NEEDLES = ["MARKERant", "MARKERaws", "MARKERgh", "MARKERslack"]
ECHO = "echo $ANTHROPIC_API_KEY $AWS_SECRET_ACCESS_KEY $GITHUB_TOKEN $SLACK_WEBHOOK_URL"
AGENT = """\
import json, os, sys
values = " ".join(os.environ[k] for k in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
                                         "SLACK_WEBHOOK_URL"))
print("agent sees", values)
print("on stderr", values, file=sys.stderr)
task = os.environ["SPECD_TASK_DIR"]
open(os.path.join(task, "NOTES-" + os.environ["SPECD_STEP"] + ".md"), "w").write("notes " + values)
json.dump({"outcome": "done", "summary": "summary " + values, "detail": {"env": values}, "list": [values]},
          open(os.environ["SPECD_RESULT"], "w"))
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _leaks(text: str) -> list[str]:
    return [n for n in NEEDLES if n in text]


def test_markers_reach_no_file_commit_or_output(tmp_path: Path, server: Any) -> None:
    root = tmp_path / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "T")
    for name in ("discuss", "plan"):
        (root / ".specd" / "workflows" / f"{name}.md").write_text(f"# {name}\n\nDo {name}.\n")
    # The command agent is given the keys on purpose (the jail hands an agent no secret its block does not name).
    pipeline = {"schema_version": "1.0", "mode": "auto", "agent": {"env_allow": list(MARKERS)},
                "hooks": {"post-step": {"run": ECHO}},
                "pipelines": {"main": [
                    {"name": "discuss", "workflow": "discuss.md",
                     "hooks": {"pre": {"run": f"{ECHO}; exit 3", "optional": True}}},
                    {"name": "plan", "workflow": "plan.md"}]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    (tmp_path / "agent.py").write_text(AGENT)
    env = {**os.environ, **MARKERS, "ANTHROPIC_BASE_URL": server.url, "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    outputs: list[str] = []

    def specd(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], capture_output=True,
                              text=True, env=env, cwd=root, timeout=180, stdin=subprocess.DEVNULL, check=False)
        outputs.extend([done.stdout, done.stderr])
        return done

    def through(task: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``task`` to its end, approving each hold for the notes the agent wrote on purpose."""
        done = specd("continue", task, *args)
        while done.returncode == 3:
            said = done.stdout + done.stderr
            assert f".specd/tasks/{task}/NOTES-" in said, said
            assert all(f"environment variable {name}" in said for name in MARKERS), said
            assert specd("approve", task).returncode == 0
            done = specd("continue", task)
        return done

    assert specd("new", "cmd", "--description", "task one").returncode == 0
    assert specd("new", "llm", "--description", "task two").returncode == 0
    agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'agent.py'))}"
    done = through("cmd", "--auto", "--agent", agent)
    assert done.returncode == 0, done.stderr
    values = " ".join(MARKERS.values())
    server.push(
        fake.message(f"I can see {values}", fake.tool("run_command", command="python -c \"print('hi')\"")),
        fake.message(fake.tool("write_file", path=".specd/tasks/llm/NOTES-llm.md", content=f"notes {values}")),
        fake.complete("done", f"discussed {values}"),
        fake.complete("done", f"planned {values}"),
    )
    done = through("llm", "--auto", "--agent", "anthropic")
    assert done.returncode == 0, done.stderr
    specd("status", "cmd", "--json")
    specd("status", "llm")

    on_purpose = {root / ".specd/tasks/cmd/NOTES-discuss.md", root / ".specd/tasks/cmd/NOTES-plan.md",
                  root / ".specd/tasks/llm/NOTES-llm.md"}
    for path in on_purpose:  # the agents really had the values: the check below is not vacuous
        assert _leaks(path.read_text()) == NEEDLES, path
    leaked = {str(p): _leaks(p.read_text(errors="replace")) for p in (root / ".specd").rglob("*")
              if p.is_file() and p not in on_purpose}
    assert {k: v for k, v in leaked.items() if v} == {}
    excludes = [f":(exclude){p.relative_to(root)}" for p in on_purpose]
    history = _git(root, "log", "-p", "--all", "--", ".", *excludes)
    assert "discuss complete" in history
    assert _leaks(history) == []
    assert _leaks(_git(root, "log", "--all", "--format=%B")) == []
    assert [n for text in outputs for n in _leaks(text)] == []

    state = StateStore(root / ".specd/tasks/cmd", "cmd").load()
    assert state is not None
    summaries = [h["summary"] for h in state.history if h.get("step") == "discuss" and h.get("kind") == "step"]
    assert summaries
    assert all("summary [REDACTED]" in s for s in summaries)
    assert "Hook failure" in (root / ".specd/tasks/cmd/CHANGELOG.md").read_text()
