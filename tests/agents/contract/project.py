"""A project for the contract suite: a git repository in ``tmp_path / "proj"`` run by the real ``specd`` CLI.

Its environment is the machine's without any backend's keys or base URLs (``base.SCRUB``), with the
backend's own ``env()`` on top, so the only model a run can reach is the backend's fake.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked

from .base import SCRUB, Backend

WORK = "---\ndescription: {name}\n---\n\n# {name}\n\nDo the {name} work.\n"
REVIEW = ("---\ndescription: review\noutcomes: [approve, revise]\nverdict_file: REVIEW.md\n---\n\n"
          "# Review\n\nReview src/app.py; end REVIEW.md with `Verdict: approve` or `Verdict: revise`.\n")


class Project:
    def __init__(self, root: Path, backend: Backend) -> None:
        self.root, self.backend = root, backend
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 1\n")
        self.env = {k: v for k, v in os.environ.items() if k not in SCRUB and not k.startswith("GIT_")}
        self.env.update({"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", **backend.env()})
        self.git("init", "-q", "-b", "main")
        for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
            self.git("config", key, value)

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True, env=self.env)

    def pipeline(self, steps: list[dict[str, Any]], workflows: dict[str, str] | None = None,
                 **agent: Any) -> None:
        """Write the pipeline (each step's workflow a plain one unless ``workflows`` gives its text), commit."""
        for step in steps:
            text = (workflows or {}).get(step["name"], REVIEW if step["name"] == "review" else WORK)
            (self.root / ".specd" / "workflows" / step["workflow"]).write_text(text.format(name=step["name"]))
        data = {"schema_version": "1.0", "mode": "auto", "agent": self.backend.agent(**agent),
                "pipelines": {"main": steps}}
        (self.root / ".specd" / "pipeline.json").write_text(json.dumps(data, indent=2))
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")
        created = self.specd("new", "t", "--description", "Fix main")
        assert created.returncode == 0, created.stderr

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=300)

    def cont(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", "t", "--auto", *extra)

    def status(self) -> dict[str, Any]:
        shown = self.specd("status", "t", "--json")
        assert shown.returncode == 0, shown.stderr
        data: dict[str, Any] = json.loads(shown.stdout)
        return data

    def history(self, kind: str = "step") -> list[dict[str, Any]]:
        return [row for row in self.status()["history"] if row.get("kind", "step") == kind]

    def steps(self) -> list[tuple[str, str]]:
        return [(row["step"], row["outcome"]) for row in self.history()]
