"""A project driven through the real CLI with ``backend: openai`` against the fake chat completions server.

``specd`` runs as a subprocess; the fake server is a thread in the test's process. No network and no
real key: a local base_url needs none, and ``KEY`` is a made-up value under a custom ``api_key_env``
where a test wants to see a key sent (and kept out of everything specd writes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import forked

_spec = importlib.util.spec_from_file_location("fake_openai", Path(__file__).parents[1] / "fake_openai.py")
assert _spec
assert _spec.loader
fake = importlib.util.module_from_spec(_spec)
sys.modules["fake_openai"] = fake
_spec.loader.exec_module(fake)

KEY_ENV = "SPECD_TEST_LLM_KEY"
KEY = "sk-test-LLMSECRET4242"
WORK = "---\ndescription: {name}\n---\n\n# {name}\n\nDo the {name} work.\n"


class App:
    def __init__(self, root: Path, server: Any) -> None:
        self.root, self.server = root, server
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 1\n")
        self.env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", KEY_ENV: KEY}
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            self.env.pop(name, None)

    def agent(self, **extra: Any) -> dict[str, Any]:
        return {"backend": "openai", "base_url": self.server.base_url, "model": "local-coder",
                "allow_commands": ["python -c*"], **extra}

    def pipeline(self, steps: list[dict[str, Any]], **agent: Any) -> None:
        for step in steps:
            (self.root / ".specd" / "workflows" / step["workflow"]).write_text(WORK.format(name=step["name"]))
        data = {"schema_version": "1.0", "mode": "auto", "agent": self.agent(**agent), "pipelines": {"main": steps}}
        (self.root / ".specd" / "pipeline.json").write_text(json.dumps(data))

    def two_steps(self, **agent: Any) -> None:
        self.pipeline([{"name": "build", "workflow": "build.md"}, {"name": "check", "workflow": "check.md"}],
                      **agent)

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return forked.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], env=self.env,
                          cwd=self.root, timeout=300)

    def new(self) -> None:
        created = self.specd("new", "t", "--description", "Fix main")
        assert created.returncode == 0, created.stderr

    def cont(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", "t", "--auto", *extra)

    def status(self) -> dict[str, Any]:
        shown = self.specd("status", "t", "--json")
        assert shown.returncode == 0, shown.stderr
        data: dict[str, Any] = json.loads(shown.stdout)
        return data

    def history(self) -> list[dict[str, Any]]:
        return [row for row in self.status()["history"] if row.get("kind", "step") == "step"]

    def no_key_on_disk(self) -> None:
        leaks = [p for p in (self.root / ".specd").rglob("*") if p.is_file() and KEY in p.read_text(errors="replace")]
        assert leaks == []


def tool_result(body: dict[str, Any]) -> str:
    """The content of the one tool message a request ends with."""
    results = fake.tool_messages(body)
    assert len(results) == 1, body["messages"][-3:]
    return str(results[0]["content"])
