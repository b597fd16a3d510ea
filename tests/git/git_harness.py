"""A real git repository with specd set up, driven by the real CLI and a real command agent.

The agent is a small Python script. On each call it looks up ``rules.json`` (in the harness
folder) by ``<task>:<step>``, then ``<step>``, then ``*``, and applies the rule:

- ``write``: ``{path: text}``, relative to the project (``{task}`` and ``{step}`` are filled in);
- ``run``: a list of commands (argv lists) to run in the project after the writes (``git init sub``);
- ``report``: list the written paths in the result's ``files`` field;
- ``hold``: then write ``held`` in the harness folder and sleep, for the test to kill specd there (a crash in
  the middle of the step; the agent cannot do it itself, since specd's jail hides specd's pid from it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked

from specd.git.repo import Repo

AGENT = r'''
import json, os, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
task, step = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"]
sys.stdin.read()
rules = json.loads((HERE / "rules.json").read_text())
rule = next((rules[k] for k in (f"{task}:{step}", step, "*") if k in rules), {})
written = []
for name, text in rule.get("write", {}).items():
    path = Path(name.format(task=task, step=step))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.format(task=task, step=step))
    written.append(str(path))
for argv in rule.get("run", []):
    subprocess.run(argv, check=True, capture_output=True)
if rule.get("hold"):
    (HERE / "held").write_text("held")
    time.sleep(60)
    sys.exit(1)
result = {"outcome": "done", "summary": f"{task} {step} done"}
if rule.get("report"):
    result["files"] = written
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps(result))
'''

WORKFLOW = "---\ndescription: the {name} step\noutcomes: [\"done\"]\n---\n\n# {name}\n\nDo the {name} work.\n"
RUN_TIMEOUT = 120.0  # a safety net only: a hang fails the test instead of the suite
IDENTITY = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}


def plain_git(root: Path, *args: str) -> str:
    """One git command in ``root`` with a fixed identity, checked: for tests of specd's git pieces on their own."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


def committed(root: Path, files: dict[str, str | bytes]) -> Repo:
    """A repository at ``root`` whose first commit holds ``files`` (text or bytes), opened as specd opens one."""
    plain_git(root, "init", "-q", "-b", "main")
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    plain_git(root, "add", "-A")
    plain_git(root, "commit", "-q", "-m", "first")
    repo = Repo.open(root)
    assert repo is not None
    return repo


class GitProject:
    def __init__(self, tmp_path: Path, steps: tuple[str, ...] = ("discuss", "plan", "execute")) -> None:
        self.root = tmp_path / "proj"
        self.dir = tmp_path / "harness"
        self.root.mkdir()
        self.dir.mkdir()
        self.steps = steps
        self.agent = self.dir / "agent.py"
        self.agent.write_text(AGENT, encoding="utf-8")
        self.rules({})
        self.env = {k: v for k, v in os.environ.items() if k not in IDENTITY and k != "ANTHROPIC_API_KEY"}
        # The agent's rules and marks live beside the project: shown to the jail because this environment says so.
        self.env.update({"NO_COLOR": "1", "COLUMNS": "1000", "TERM": "dumb", "PYTHONDONTWRITEBYTECODE": "1",
                         "SPECD_JAIL_WRITE": str(self.dir)})
        self.git("init", "-q")
        self.git("config", "user.email", "tester@example.com")
        self.git("config", "user.name", "Tester")
        self.git("config", "commit.gpgsign", "false")
        init = self.specd("init")
        assert init.returncode == 0, init.stderr
        pipeline = {"schema_version": "1.0", "pipelines": {"main": [
            {"name": step, "workflow": "work.md"} for step in steps]}}
        self.write(".specd/pipeline.json", json.dumps(pipeline, indent=2))
        self.write(".specd/workflows/work.md", WORKFLOW.format(name="work"))
        self.write("src/app.py", "print('hello')\n")
        self.write("README.md", "# the user's project\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")

    # --- files and git ---------------------------------------------------------------------
    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def git(self, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=False,
                                env=self.env)
        assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
        return result.stdout

    def ignore(self, rules: str) -> None:
        """A .gitignore of ``rules``, committed."""
        self.write(".gitignore", rules)
        self.git("add", ".gitignore")
        self.git("commit", "-q", "-m", "ignore")

    def commits(self) -> list[tuple[str, list[str]]]:
        """Every commit after the initial one, oldest first: (subject, files it touches)."""
        out = self.git("log", "--reverse", "--format=%x00%s", "--name-only", "--no-renames")
        commits = []
        for block in out.split("\0")[1:]:
            subject, *files = [line for line in block.splitlines() if line]
            commits.append((subject, files))
        return [c for c in commits if c[0] != "initial"]

    def rules(self, rules: dict[str, Any]) -> None:
        # replaced in one go: a running agent may read it at any moment
        scratch = self.dir / "rules.tmp"
        scratch.write_text(json.dumps(rules), encoding="utf-8")
        scratch.replace(self.dir / "rules.json")

    # --- specd -----------------------------------------------------------------------------
    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "specd", *args]

    def agent_spec(self) -> str:
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.agent))}"

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run(self.argv(*args), cwd=self.root, env=self.env, timeout=RUN_TIMEOUT)

    def new(self, task: str) -> None:
        result = self.specd("new", task)
        assert result.returncode == 0, result.stderr

    def run(self, task: str) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", task, "--auto", "--agent", self.agent_spec())

    def held(self, task: str) -> str:
        """A new task ``task`` run until it waits for a person (exit 3): what it said, on one line."""
        self.new(task)
        ran = self.run(task)
        out = " ".join((ran.stdout + ran.stderr).split())
        assert ran.returncode == 3, out
        return out

    def start(self, task: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv("continue", task, "--auto", "--agent", self.agent_spec()), cwd=self.root,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                env=self.env)


def warnings(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if "warning" in line.lower()]
