"""Task folders written the way specdacular writes them, and the real `specd` CLI to run over them.

The agent is a small Python script: each call appends ``<pipeline> <step> <phase>`` to ``log.txt`` and
writes the one file its step's workflow produces (research → RESEARCH.md, a phase plan → PLAN.md, …), with
a call counter in it, so a step that ran again would show as a rewritten file. It keeps each prompt it
was given as ``prompt-<n>.txt``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked

AGENT = r'''
import json, os, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
prompt = sys.stdin.read()
step, phase = os.environ["SPECD_STEP"], os.environ.get("SPECD_PHASE", "")
pipeline, kind = os.environ["SPECD_PIPELINE"], os.environ["SPECD_KIND"]
task_dir = Path(os.environ["SPECD_TASK_DIR"])
with open(HERE / "log.txt", "a") as log:
    log.write(" ".join(p for p in (pipeline, step, phase) if p) + "\n")
count = len((HERE / "log.txt").read_text().splitlines())
(HERE / f"prompt-{count}.txt").write_text(prompt)
if kind == "step":
    folder = next((task_dir / root / f"phase-{phase}" for root in ("plans", "phases")
                   if (task_dir / root / f"phase-{phase}").is_dir()), task_dir / "phases" / f"phase-{phase}")
    produces = {"discuss": task_dir / "DECISIONS.md", "research": task_dir / "RESEARCH.md",
                "plan": folder / "PLAN.md" if phase else task_dir / "ROADMAP.md",
                "execute": folder / "EXECUTED.md", "review": folder / "REVIEW.md", "revise": folder / "REVISED.md"}
    target = produces.get(step)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        verdict = "Verdict: approve\n" if step == "review" else ""  # a review decides, as the workflow asks
        target.write_text(f"written by {step} {phase} (call {count})\n{verdict}")
'''

ROADMAP_HEAD = "# Roadmap: {name}\n\n## Overview\n\n| Metric | Value |\n|--------|-------|\n| Status | Planned |\n\n"


def roadmap(name: str, phases: list[tuple[str, str, bool]], *, marker: str = "checkbox") -> str:
    """specdacular's ROADMAP.md: a `- [ ] **Phase N: Name** — …` list, then `### Phase N: Name` details.

    A done phase is marked either by ticking its box (``checkbox``) or by a ``**Status:** Complete`` line
    under its heading (``status``); only that one marker is written, so each is tested on its own.
    """
    lines = [ROADMAP_HEAD.format(name=name), "## Phases\n"]
    for number, title, done in phases:
        box = "x" if done and marker == "checkbox" else " "
        lines.append(f"- [{box}] **Phase {number}: {title}** — build {title.lower()}")
    lines.append("\n---\n\n## Phase Details\n")
    for number, title, done in phases:
        state = "Complete" if done and marker == "status" else "Planned"
        lines += [f"### Phase {number}: {title}\n", f"**Goal:** {title}.\n",
                  "**Plans:**\n- `01-PLAN.md` — the work\n", f"**Status:** {state}\n", "---\n"]
    lines += ["## Execution Order\n", "```", "### Phase 99: inside a code fence, not a phase", "```"]
    return "\n".join(lines) + "\n"


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        self.dir = tmp_path / "agent"
        (self.root / ".specd").mkdir(parents=True)
        self.dir.mkdir()
        self.agent = self.dir / "agent.py"
        self.agent.write_text(AGENT, encoding="utf-8")
        # The agent logs beside the project: shown to the jail because this environment lists the folder.
        self.env = {**os.environ, "COLUMNS": "1000", "NO_COLOR": "1", "TERM": "dumb", "SPECD_JAIL_WRITE": str(self.dir)}
        self.env.pop("ANTHROPIC_API_KEY", None)

    def task(self, name: str, config: dict[str, Any] | str, *, folder: str = "tasks", gray: list[bool] | None = None,
             research: bool = False, roadmap_text: str | None = None, plans: dict[str, list[str]] | None = None,
             plan_root: str = "phases") -> Path:
        """Write a task folder: FEATURE, CONTEXT (with Gray Areas Remaining), DECISIONS, STATE, config.json…"""
        task_dir = self.root / ".specd" / folder / name
        task_dir.mkdir(parents=True)
        text = config if isinstance(config, str) else json.dumps({"task_name": name, **config}, indent=2)
        (task_dir / "config.json").write_text(text, encoding="utf-8")
        (task_dir / "FEATURE.md").write_text(f"# Feature: {name}\n\n## What This Is\n\nA thing.\n", encoding="utf-8")
        items = "\n".join(f"- [{'x' if done else ' '}] Question {i}" for i, done in enumerate(gray or []))
        (task_dir / "CONTEXT.md").write_text(
            f"# Context: {name}\n\n## Discussion Summary\n\n- [ ] not a gray area\n\n## Gray Areas Remaining\n\n"
            f"{items}\n\n## Resolved Questions\n\n- [ ] ticked elsewhere, not counted\n", encoding="utf-8")
        (task_dir / "DECISIONS.md").write_text(f"# Decisions: {name}\n\n### DEC-001: Use JSON\n", encoding="utf-8")
        (task_dir / "STATE.md").write_text(f"# State: {name}\n\n## Current Position\n", encoding="utf-8")
        if research:
            (task_dir / "RESEARCH.md").write_text("# Research\n\nFindings.\n", encoding="utf-8")
        if roadmap_text is not None:
            (task_dir / "ROADMAP.md").write_text(roadmap_text, encoding="utf-8")
        for phase, files in (plans or {}).items():
            phase_dir = task_dir / plan_root / f"phase-{phase}"
            phase_dir.mkdir(parents=True)
            for file in files:
                (phase_dir / file).write_text(f"# Plan {phase}\n", encoding="utf-8")
        return task_dir

    def specd(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=timeout)

    def agent_spec(self) -> str:
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.agent))}"

    def cont(self, task: str) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", task, "--auto", "--agent", self.agent_spec())

    def status(self, task: str | None = None) -> Any:
        result = self.specd("status", *([task] if task else []), "--json")
        assert result.returncode == 0, result.stderr
        shown = json.loads(result.stdout)
        return shown if task else shown["tasks"]  # the listing sits under "tasks" in the envelope

    def prompt(self, call: int) -> str:
        """The prompt of the agent's ``call``-th invocation (1-based)."""
        return (self.dir / f"prompt-{call}.txt").read_text(encoding="utf-8")

    def log(self) -> list[str]:
        path = self.dir / "log.txt"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}
