"""A step's `agent:` block (issue 30): bad forms are exit 2 at their line, JSON and YAML; `--agent` and a
step's own backend; `pipeline show` and `doctor` name the backend each step uses.

Load checks go through the real CLI in process; the run goes through `specd continue` with a scripted agent
for the run and a command agent named by one step, so both backends drive the real loop.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from specd.state.store import StateStore


def doc(agent: Any, *, where: str = "execute") -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"name": "plan", "workflow": "plan.md"},
                                   {"name": "execute", "workflow": "execute.md"}]
    data = {"schema_version": "1.0", "pipelines": {"main": steps, "sub": [{"name": "inner", "workflow": "plan.md"}]}}
    if where == "sub":
        steps.append({"name": "nested", "pipeline": "sub", "agent": agent})
    else:
        steps[1]["agent"] = agent
    return data


def setup(project: Any, fmt: str, data: dict[str, Any]) -> str:
    for name in ("plan", "execute"):
        project.file(f".specd/workflows/{name}.md", f"# {name}\n\nDo {name}.\n")
    return str(project.pipeline(data, fmt))


def line_of(path: str, text: str) -> int:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


BAD = [  # the step's block, the key whose line is named, where in the file, what is said
    ({"backend": "claud"}, "backend", "pipelines.main[1].agent.backend", "'claud' is not allowed; expected one of"),
    ({"modle": "x"}, "modle", "pipelines.main[1].agent.modle", "unknown key 'modle'; did you mean 'model'?"),
    ({"max_step_cost_usd": -1}, "max_step_cost_usd", "pipelines.main[1].agent.max_step_cost_usd", "minimum"),
    ({"network": "yes"}, "network", "pipelines.main[1].agent.network", "'yes'"),
    ({"max_cost_usd": 5}, "max_cost_usd", "pipelines.main[1].agent.max_cost_usd", "whole run's budget"),
    ({"backend": "command"}, "backend", "pipelines.main[1].agent.backend", "needs agent.command"),
    ("anthropic", "agent", "pipelines.main[1].agent", "expected object"),
]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("agent", "key", "where", "said"), BAD)
def test_bad_step_agent_blocks_are_exit_2_at_their_line(project: Any, run_cli: Any, fmt: str, agent: Any, key: str,
                                                        where: str, said: str) -> None:
    path = setup(project, fmt, doc(agent))

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2, result.out + result.err
    message = next(line for line in result.err.splitlines() if where in line)
    line = line_of(path, f'"{key}"' if fmt == "json" else f"{key}:")
    assert message.startswith(f"specd: error: {path}:{line}: {where}: ") or f"\n{path}:{line}: {where}: " in \
        result.err
    assert said in result.err
    assert "fix:" in result.err.lower()


def test_an_agent_block_on_a_pipeline_reference_is_refused_at_its_line(project: Any, run_cli: Any) -> None:
    path = setup(project, "yaml", doc({"model": "m"}, where="sub"))

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2
    line = line_of(path, "agent:")
    assert f"{path}:{line}: pipelines.main[2].agent: 'agent' only works on a step with 'workflow'" in result.err


def test_a_step_backend_wins_over_the_agent_flag_and_every_row_names_its_backend(project: Any,
                                                                                run_cli: Any) -> None:
    """`--agent scripted:...` runs plan; execute names the command backend in its block and runs there."""
    marker = project.root / "ran-by-command"  # inside the project: the jail lets the agent write there
    command = f"{sys.executable} -c \"import pathlib; pathlib.Path({str(marker)!r}).write_text('x')\""
    setup(project, "json", doc({"backend": "command", "command": command}))
    (project.root / "script.yaml").write_text("- match: {step: plan}\n  outcome: done\n  summary: planned\n")
    assert run_cli("--project", str(project.root), "new", "t", "--description", "d").code == 0

    shown = run_cli("--project", str(project.root), "pipeline", "show", "--json").json()
    text = run_cli("--project", str(project.root), "pipeline", "show").out
    ran = run_cli("--project", str(project.root), "continue", "t", "--auto", "--agent", "scripted:script.yaml")

    assert ran.code == 0, ran.out + ran.err
    plan, execute = shown["pipelines"]["main"]
    assert plan["agent"] is None
    assert plan["backend"].startswith("anthropic")  # the file sets none; --agent is the run's to say
    assert execute["agent"]["backend"] == "command"
    assert execute["backend"] == "command (the step's own)"
    assert "agent: command (the step's own)" in " ".join(text.split())  # however wide the terminal wraps it
    assert marker.read_text() == "x"
    state = StateStore(project.root / ".specd" / "tasks" / "t", "t").load()
    assert state is not None
    rows = [(row["step"], row["backend"]) for row in state.history if row["kind"] == "step"]
    assert rows == [("plan", "scripted"), ("execute", "command")]
    status = run_cli("--project", str(project.root), "status", "t").out  # each cost row names its backend
    assert "step on scripted" in status
    assert "step on command" in status


def test_doctor_counts_a_step_backend_as_used(project: Any, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    data = doc({"backend": "anthropic"})
    data["agent"] = {"backend": "command", "command": "true"}
    setup(project, "json", data)

    result = run_cli("--project", str(project.root), "doctor", "--json")

    checks = {check["name"]: check for check in json.loads(result.out)["checks"]}
    assert checks["agent: anthropic"]["level"] == "FAIL"
    assert "used by step execute" in checks["agent: anthropic"]["detail"]


def test_steps_that_all_name_a_backend_need_no_default_and_a_missing_key_stops_before_any_step(
        project: Any, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    marker = project.root / "ran"
    command = {"backend": "command", "command": f"echo x >> {marker}"}
    data = doc(command)
    data["pipelines"]["main"][0]["agent"] = command  # every step names its backend: the default is never built
    setup(project, "json", data)
    assert run_cli("--project", str(project.root), "new", "t", "--description", "d").code == 0

    ran = run_cli("--project", str(project.root), "continue", "t", "--auto")

    assert ran.code == 0, ran.out + ran.err
    assert marker.read_text() == "x\nx\n"
    data["pipelines"]["main"][1]["agent"] = {"backend": "anthropic"}  # execute now needs an API key
    setup(project, "json", data)
    assert run_cli("--project", str(project.root), "new", "u", "--description", "d").code == 0
    refused = run_cli("--project", str(project.root), "continue", "u", "--auto")
    assert refused.code == 2
    assert "ANTHROPIC_API_KEY" in refused.err
    assert marker.read_text() == "x\nx\n"  # plan did not run either: checked before any step


def test_a_step_cap_its_own_agent_cannot_keep_is_refused_naming_the_step(project: Any, run_cli: Any) -> None:
    """A step on the command agent with a per-step cap: the command agent reports usage only at the end."""
    data = doc({"backend": "command", "command": "true", "max_step_cost_usd": 1})
    data["agent"] = {"backend": "command", "command": "true"}
    path = setup(project, "json", data)
    assert run_cli("--project", str(project.root), "new", "t", "--description", "d").code == 0

    refused = run_cli("--project", str(project.root), "continue", "t", "--auto")

    assert refused.code == 2, refused.out + refused.err
    assert f"{path}: pipelines.main[1]: agent.max_step_cost_usd: the command agent cannot keep" in refused.err
    assert StateStore(project.root / ".specd" / "tasks" / "t", "t").load() is None  # nothing ran, nothing saved
