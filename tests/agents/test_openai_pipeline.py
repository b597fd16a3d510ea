"""Acceptance: the built-in pipeline on a 2-phase task, run by `backend: openai` against a local fake server.

The project's pipeline file is the built-in one with an agent block added (a project file replaces the
default whole). The fake model reads specd's step header from the conversation and calls complete_step
with an outcome from the enum of the step's tool; in phase 01's execute step it first runs a command
through run_command, which reports where it ran: the project root, without the API key in its
environment, and, where the jail is bubblewrap, without a network that reaches the server.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from openai_app import KEY, KEY_ENV, App, fake, tool_result

from specd.resources import builtin
from specd.system import jail

ROADMAP = "# Roadmap\n\n### Phase 1: Parser\n\nParse CSV.\n\n### Phase 2: Export\n\nWrite CSV.\n"
HEADER = re.compile(r"Step: (\S+) \((?:step|hook); pipeline (\S+?)(?:, phase (\S+))?; mode")
PROBE = ("python -c \"import os, socket; s = socket.socket(); s.settimeout(5); "
         "print(dict(cwd=os.getcwd(), key=os.environ.get('{key}'), net=s.connect_ex(('127.0.0.1', {port}))))\"")


class Model:
    def __init__(self, port: int) -> None:
        self.port = port
        self.seen: list[tuple[str, str, str | None]] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        said = " ".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
        step, pipeline, phase = HEADER.findall(said)[-1]
        self.seen.append((step, pipeline, phase or None))
        if (step, phase) == ("execute", "01") and not fake.tool_messages(body):
            return fake.message(fake.call("run_command", command=PROBE.format(key=KEY_ENV, port=self.port)))
        complete = next(t["function"] for t in body["tools"] if t["function"]["name"] == "complete_step")
        outcomes = complete["parameters"]["properties"]["outcome"]["enum"]
        return fake.complete("approve" if "approve" in outcomes else outcomes[0], f"{step} finished")


def test_the_builtin_pipeline_runs_end_to_end_with_commands_in_the_project_tier(tmp_path: Path) -> None:
    with fake.FakeOpenAI() as server:
        model = Model(int(server.url.rsplit(":", 1)[1]))
        server.responder = model
        app = App(tmp_path / "proj", server)
        pipeline = json.loads(builtin("pipelines", "default.json").read_text())
        pipeline["agent"] = app.agent(api_key_env=KEY_ENV)
        (app.root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
        app.new()
        (app.root / ".specd" / "tasks" / "t" / "ROADMAP.md").write_text(ROADMAP)
        run = app.cont()
        bodies = server.bodies

    assert run.returncode == 0, run.stdout + run.stderr
    assert app.status()["status"] == "COMPLETE"
    steps = [(row["step"], row.get("phase"), row["outcome"]) for row in app.history()]
    assert steps == [("discuss", None, "done"), ("research", None, "done"), ("plan", None, "done"),
                     ("plan", "01", "done"), ("execute", "01", "done"), ("review", "01", "approve"),
                     ("plan", "02", "done"), ("execute", "02", "done"), ("review", "02", "approve")]
    assert [seen[0] for seen in model.seen].count("execute") == 3  # the probe, then two completions

    probe = next(i for i, body in enumerate(bodies) if fake.tool_messages(body))
    report = tool_result(bodies[probe])
    assert report.startswith("exit code 0"), report
    found = ast.literal_eval(report.splitlines()[1])
    assert found["cwd"] == str(app.root)
    assert found["key"] is None  # secret-named variables never reach the project tier
    if jail.active():
        assert found["net"] != 0  # no network: the server on the host's loopback is out of reach
    app.no_key_on_disk()
    assert KEY not in run.stdout + run.stderr
