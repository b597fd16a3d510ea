"""A project in tmp_path driven through the real CLI (`python -m specd` subprocesses)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked

from specd.state.store import StateStore

SECRET = "sk-ant-test-SECRET123"
REVIEW = ("---\ndescription: review\noutcomes: [approve, revise]\nverdict_file: REVIEW.md\n---\n\n"
          "# Review\n\nReview src/app.py; end REVIEW.md with `Verdict: approve` or `Verdict: revise`.\n")
WORK = "---\ndescription: {name}\n---\n\n# {name}\n\nDo the {name} work.\n"


class App:
    """A project in tmp_path driven by `python -m specd` subprocesses."""

    def __init__(self, root: Path, server: Any | None = None) -> None:
        self.root = root
        (root / ".specd").mkdir(parents=True)
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 1\n")
        # A command agent logs its calls beside the project: listed for the jail in this environment.
        self.env = {**os.environ, "ANTHROPIC_API_KEY": SECRET, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb",
                    "SPECD_JAIL_WRITE": str(self.root.parent)}
        self.env.pop("ANTHROPIC_AUTH_TOKEN", None)
        if server is not None:
            self.env["ANTHROPIC_BASE_URL"] = server.url

    def pipeline(self, steps: list[dict[str, Any]], **top: Any) -> None:
        workflows = self.root / ".specd" / "workflows"
        workflows.mkdir(exist_ok=True)
        for step in steps:
            text = REVIEW if step["name"] == "review" else WORK.format(name=step["name"])
            (workflows / step["workflow"]).write_text(text)
        data = {"schema_version": "1.0", "mode": "auto", **top, "pipelines": {"main": steps}}
        (self.root / ".specd" / "pipeline.json").write_text(json.dumps(data))

    def review_pipeline(self, **top: Any) -> None:
        self.pipeline([
            {"name": "review", "workflow": "review.md", "outcomes": {"revise": "fix", "approve": "final"}},
            {"name": "fix", "workflow": "fix.md", "outcomes": {"done": "review"}},
            {"name": "final", "workflow": "final.md"},
        ], **top)

    def script(self, name: str, text: str) -> str:
        path = self.root.parent / name
        path.write_text(text)
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(path))}"

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=120)

    def new(self) -> None:
        created = self.specd("new", "t", "--description", "Fix main")
        assert created.returncode == 0, created.stderr

    def cont(self, agent: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", "t", "--auto", "--agent", agent, *extra)

    @property
    def task_dir(self) -> Path:
        return self.root / ".specd" / "tasks" / "t"

    def state(self) -> Any:
        return StateStore(self.task_dir, "t").load()

    def steps(self) -> list[tuple[str, str]]:
        return [(row["step"], row["outcome"]) for row in self.state().history if row.get("kind", "step") == "step"]
