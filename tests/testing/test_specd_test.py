"""`specd test` (issue 30): a pipeline's cases through the real loop, no tokens.

Everything goes through the real CLI in process: a task is run with the scripted agent, recorded with
`specd test --record`, replayed by `specd test`, then the pipeline is edited so the run passes over a step
and the recorded case must fail naming it. Bad test files are exit 2 at their line, JSON and YAML.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from specd.resources import builtin
from specd.state.store import StateStore

PLAN_OUTPUT = {"type": "object", "properties": {"docs": {"type": "boolean"}}, "required": ["docs"]}
SCRIPT = """\
- match: {step: plan}
  outcome: done
  summary: planned
  data: {output: {docs: false}}
  writes: {"$task_dir/PLAN.md": "# Plan\\n"}
- match: {step: execute}
  summary: executed
- match: {step: review}
  outcome: approve
  summary: looks right
"""


def pipeline(project: Any, **plan: Any) -> None:
    for name in ("plan", "execute", "docs", "review"):
        outcomes = "outcomes: [approve, revise]\n" if name == "review" else ""
        project.file(f".specd/workflows/{name}.md", f"---\ndescription: {name}\n{outcomes}---\n\n# {name}\n")
    steps = [{"name": "plan", "workflow": "plan.md", "output": PLAN_OUTPUT, **plan},
             {"name": "execute", "workflow": "execute.md"},
             {"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"},
             {"name": "review", "workflow": "review.md", "outcomes": {"revise": "execute"}}]
    project.pipeline({"schema_version": "1.0", "mode": "auto", "pipelines": {"main": steps}})


@pytest.fixture
def recorded(project: Any, run_cli: Any) -> Path:
    """Task t, run for real with the scripted agent, then recorded as a case."""
    pipeline(project)
    (project.root / "script.yaml").write_text(SCRIPT)
    assert run_cli("--project", str(project.root), "new", "t", "--description", "export csv").code == 0
    ran = run_cli("--project", str(project.root), "continue", "t", "--agent", "scripted:script.yaml")
    assert ran.code == 0, ran.err
    result = run_cli("--project", str(project.root), "test", "--record", "t")
    assert result.code == 0, result.err
    return project.root / ".specd" / "tests" / "t.yaml"


def test_a_recorded_run_replays_and_passes(project: Any, run_cli: Any, recorded: Path) -> None:
    case = yaml.safe_load(recorded.read_text())["cases"][0]
    assert case["expect"] == {"path": [{"plan": "done"}, {"execute": "done"}, {"docs": "skipped"},
                                       {"review": "approve"}], "status": "COMPLETE"}
    assert case["steps"][0] == {"step": "plan", "outcome": "done", "summary": "planned", "output": {"docs": False},
                                "files": {"PLAN.md": "# Plan\n"}}
    task_dir = project.root / ".specd" / "tasks" / "t"
    before = (task_dir / ".pipeline-state.json").read_bytes()

    result = run_cli("--project", str(project.root), "test")

    assert result.code == 0, result.out + result.err
    assert "PASS  t.yaml: recorded from t (4 steps, COMPLETE)" in result.out
    assert "1 cases: 1 passed, 0 failed" in result.out
    # The user's tree is untouched: still one task, its run state as it was.
    assert sorted(p.name for p in (project.root / ".specd" / "tasks").iterdir()) == ["t"]
    assert (task_dir / ".pipeline-state.json").read_bytes() == before


def test_a_change_that_passes_over_a_step_fails_the_recorded_case_naming_it(project: Any, run_cli: Any,
                                                                          recorded: Path) -> None:
    pipeline(project, outcomes={"done": "docs"})  # plan now jumps past execute

    result = run_cli("--project", str(project.root), "test")

    assert result.code == 1, result.out + result.err
    assert "FAIL  t.yaml: recorded from t" in result.out
    assert "step 2: expected execute: done, got docs: skipped; the run passed over 'execute'" in result.out
    assert "0 passed, 1 failed" in result.out
    as_json = run_cli("--project", str(project.root), "test", "--json").json()
    assert as_json["ok"] is False
    assert as_json["error"]["code"] == 1
    [case] = as_json["cases"]
    assert case["passed"] is False
    assert case["path"] == ["plan: done", "docs: skipped", "review: approve"]


def test_an_output_in_a_case_decides_a_condition(project: Any, run_cli: Any) -> None:
    pipeline(project)
    case = {"name": "docs wanted", "steps": [{"step": "plan", "output": {"docs": True}},
                                             {"step": "review", "outcome": "approve"}],
            "expect": {"path": ["plan", "execute", "docs: done", "review: approve"]}}
    project.file(".specd/tests/docs.json", json.dumps({"cases": [case]}))

    result = run_cli("--project", str(project.root), "test", "--json")

    assert result.code == 0, result.out + result.err
    assert result.json()["cases"][0]["path"] == ["plan: done", "execute: done", "docs: done", "review: approve"]


def test_the_builtin_pipeline_passes_its_own_tests(run_cli: Any, tmp_path: Path) -> None:
    result = run_cli("--project", str(tmp_path), "test", "--builtin")

    assert result.code == 0, result.out + result.err
    shipped = yaml.safe_load(builtin("pipelines", "default.tests.yaml").read_text())["cases"]
    assert len(shipped) >= 5
    assert result.out.count("PASS  default.tests.yaml: ") == len(shipped)
    assert f"{len(shipped)} cases: {len(shipped)} passed, 0 failed" in result.out
    assert "a revise adds a fix phase" in result.out


BAD = [  # the case, the key whose line is named (a missing key: the object's first), what is said
    ({"name": "x", "expect": {"path": ["plan"], "statsu": "COMPLETE"}}, "statsu",
     "unknown key 'statsu'; did you mean 'status'?"),
    ({"name": "x", "steps": [{"step": "plan", "outcom": "done"}], "expect": {"path": ["plan"]}}, "outcom",
     "unknown key 'outcom'; did you mean 'outcome'?"),
    ({"name": "x", "expect": {"path": ["plan"], "status": "DONE"}}, "status", "'DONE' is not one of"),
    ({"name": "x", "expect": {"path": ["plan@one"]}}, "path", "is not a place in the path"),
    ({"name": "x", "steps": [{"outcome": "done"}], "expect": {"path": ["plan"]}}, "outcome",
     "'step' is a required property"),
    ({"name": "x", "steps": [{"step": "plan", "output": [1]}], "expect": {"path": ["plan"]}}, "output",
     "is not of type 'object'"),
    ({"name": "x"}, "name", "'expect' is a required property"),
    ({"name": "x", "steps": [{"step": "reveiw"}], "expect": {"path": ["plan"]}}, "step",
     "no step named 'reveiw' in the pipeline; did you mean 'review'?"),
    ({"name": "x", "expect": {"path": ["plan", "exectue@01"]}}, "path",
     "no step named 'exectue' in the pipeline; did you mean 'execute'?"),
    ({"name": "x", "answers": ["approve please"], "expect": {"path": ["plan"]}}, "answers", "does not match"),
]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("case", "key", "said"), BAD)
def test_bad_test_files_are_exit_2_at_their_line(project: Any, run_cli: Any, fmt: str, case: dict[str, Any],
                                                 key: str, said: str) -> None:
    pipeline(project)
    data = {"schema_version": "1.0", "cases": [case]}
    text = json.dumps(data, indent=2) if fmt == "json" else yaml.safe_dump(data, sort_keys=False)
    path = project.file(f".specd/tests/bad.{fmt}", text)

    result = run_cli("--project", str(project.root), "test")

    assert result.code == 2, result.out + result.err
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if (f'"{key}"' if fmt == "json" else f"{key}:") in text)
    assert f"{path}:{line}: cases[0]" in result.err
    assert said in result.err
    assert "fix:" in result.err


def test_no_tests_and_a_second_record_are_exit_2_with_the_fix(project: Any, run_cli: Any, recorded: Path) -> None:
    again = run_cli("--project", str(project.root), "test", "--record", "t")
    assert again.code == 2
    assert "--force" in again.err
    recorded.unlink()
    none = run_cli("--project", str(project.root), "test")
    assert none.code == 2
    assert "no tests" in none.err
    state = StateStore(project.root / ".specd" / "tasks" / "t", "t").load()
    assert state is not None
    assert state.status == "COMPLETE"


HELD = """\
- {match: {step: plan}, data: {output: {docs: false}}}
- {match: {step: execute}, summary: first try}
- {match: {step: review}, outcome: revise, summary: not yet}
- {match: {step: execute}, summary: second try}
- {match: {step: review}, outcome: approve}
"""


def test_a_recorded_hold_and_its_answer_replay(project: Any, run_cli: Any) -> None:
    pipeline(project)
    data = json.loads((project.root / ".specd" / "pipeline.json").read_text())
    data["pipelines"]["main"][3].update(outcomes={"revise": "stop"}, on_reject="execute")  # a revise waits
    project.pipeline(data)
    (project.root / "script.yaml").write_text(HELD)
    root = str(project.root)
    assert run_cli("--project", root, "new", "t", "--description", "d").code == 0
    assert run_cli("--project", root, "continue", "t", "--agent", "scripted:script.yaml").code == 3
    assert run_cli("--project", root, "reject", "t", "--note", "mind the quotes").code == 0
    assert run_cli("--project", root, "continue", "t").code == 0
    assert run_cli("--project", root, "test", "--record", "t").code == 0

    case = yaml.safe_load((project.root / ".specd" / "tests" / "t.yaml").read_text())["cases"][0]
    result = run_cli("--project", root, "test")

    assert case["answers"] == ["reject: mind the quotes"]
    assert case["expect"]["holds"] == ["outcome"]
    assert [next(iter(p)) for p in case["expect"]["path"]] == ["plan", "execute", "docs", "review", "execute",
                                                               "docs", "review"]
    assert result.code == 0, result.out + result.err
    assert "PASS  t.yaml: recorded from t (7 steps, COMPLETE)" in result.out
    case["answers"] = ["approve"]  # approving the revise instead goes on to the end: the path differs
    (project.root / ".specd" / "tests" / "t.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    changed = run_cli("--project", root, "test")
    assert changed.code == 1
    assert "step 5: expected execute: done, but the run stopped before it (COMPLETE)" in changed.out


def test_the_example_in_help_passes_as_written(run_cli: Any, tmp_path: Path) -> None:
    result = run_cli("test", "--help")
    assert result.code == 0
    assert "--record TASK" in result.out
    example = result.out.split("Example .specd/tests/review.yaml:\n", 1)[1].split("\n\n", 1)[0]
    path = tmp_path / "review.yaml"
    path.write_text("\n".join(line[4:] for line in example.splitlines()))

    ran = run_cli("--project", str(tmp_path), "test", "--builtin", str(path))

    assert ran.code == 0, ran.out + ran.err
    assert "PASS  review.yaml: review sends phase 01 to revise (7 steps, COMPLETE)" in ran.out


def test_every_step_runs_on_the_scripted_agent_whatever_backend_the_file_names(
        project: Any, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    pipeline(project)
    data = json.loads((project.root / ".specd" / "pipeline.json").read_text())
    data["agent"] = {"backend": "anthropic", "max_cost_usd": 5}  # no API key here: it could not run
    data["pipelines"]["main"][1]["agent"] = {"backend": "command", "command": "exit 1", "timeout": 30}
    project.pipeline(data)
    case = {"name": "no tokens", "steps": [{"step": "plan", "output": {"docs": False}},
                                           {"step": "review", "outcome": "approve"}],
            "expect": {"path": ["plan", "execute", "docs: skipped", "review: approve"]}}
    project.file(".specd/tests/t.yaml", yaml.safe_dump({"cases": [case]}))

    result = run_cli("--project", str(project.root), "test")

    assert result.code == 0, result.out + result.err
    assert "PASS  t.yaml: no tokens (4 steps, COMPLETE)" in result.out


def test_a_yaml_pipeline_is_tested_the_same(project: Any, run_cli: Any) -> None:
    pipeline(project)
    data = json.loads((project.root / ".specd" / "pipeline.json").read_text())
    (project.root / ".specd" / "pipeline.json").unlink()
    project.pipeline(data, "yaml")
    replies = [{"step": "plan", "output": {"docs": True}}, {"step": "review", "outcome": "revise"},
               {"step": "review", "outcome": "approve"}]
    case = {"name": "yaml", "steps": replies,
            "expect": {"path": ["plan", "execute", "docs", "review: revise", "execute", "docs", "review: approve"]}}
    project.file(".specd/tests/y.yaml", yaml.safe_dump({"cases": [case]}))

    result = run_cli("--project", str(project.root), "test")

    assert result.code == 0, result.out + result.err
    assert "PASS  y.yaml: yaml (7 steps, COMPLETE)" in result.out
