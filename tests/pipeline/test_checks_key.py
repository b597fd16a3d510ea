"""`checks:` and `attempts:` in the pipeline file: good forms load, bad ones are exit-2 errors at their line."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from specd.pipeline import load_pipeline
from specd.pipeline.model import DEFAULT_HOOK_TIMEOUT
from specd.tasks.project import Project


def doc(**step: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", "pipelines": {"main": [
        {"name": "plan", "workflow": "plan.md"},
        {"name": "execute", "workflow": "execute.md", **step}]}}


def line_with(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_both_forms_load_as_checks_with_the_run_hook_jail(project: Any) -> None:
    project.pipeline(doc(checks=["python -m pytest -q", {"run": "ruff check .", "timeout": 60,
                                                          "network": ["pypi.org"], "env_allow": ["TOKEN"]}],
                         attempts=5))

    step = load_pipeline(Project(project.root)).step("main", "execute")

    assert [c.run for c in step.checks] == ["python -m pytest -q", "ruff check ."]
    assert step.checks[0].timeout is None
    assert step.checks[0].as_dict()["timeout"] == DEFAULT_HOOK_TIMEOUT
    assert step.checks[1].timeout == 60
    assert step.checks[1].network == ("pypi.org",)
    assert step.checks[1].env_allow == ("TOKEN",)
    assert step.attempts == 5
    assert load_pipeline(Project(project.root)).step("main", "plan").checks == ()


BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("not-a-list", {"checks": "python -m pytest -q"}, '"checks"', "checks: expected array"),
    ("empty-list", {"checks": []}, '"checks"', "checks: must list at least one value"),
    ("empty-command", {"checks": [""]}, '"checks"', "checks[0]: '' should be non-empty"),
    ("blank-command", {"checks": ["   "]}, '"checks"', "checks[0]: the command is blank"),
    ("a-number", {"checks": [5]}, '"checks"', "checks[0]: expected string or object, got 5"),
    ("object-without-run", {"checks": [{"timeout": 5}]}, '"checks"', "checks[0]: missing required key 'run'"),
    ("unknown-key", {"checks": [{"run": "x", "timout": 5}]}, '"timout"',
     "checks[0].timout: unknown key 'timout'; did you mean 'timeout'?"),
    ("attempts-0", {"checks": ["x"], "attempts": 0}, '"attempts"', "attempts: 0 is less than the minimum of 1"),
    ("attempts-a-string", {"checks": ["x"], "attempts": "3"}, '"attempts"', "attempts: expected integer, got '3'"),
    ("attempts-a-fraction", {"checks": ["x"], "attempts": 2.5}, '"attempts"', "attempts: expected integer"),
    ("checks-on-a-pipeline-reference", {"checks": ["x"], "pipeline": "sub"}, '"checks"',
     "checks: checks only run after a workflow step"),
]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("step", "needle", "said"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_form_is_an_exit_2_error_at_its_line_with_a_fix(project: Any, run_cli: Any, fmt: str,
                                                             step: dict[str, Any], needle: str, said: str) -> None:
    data = doc(**step)
    if "pipeline" in step:
        del data["pipelines"]["main"][1]["workflow"]
        data["pipelines"]["sub"] = [{"name": "inner", "workflow": "execute.md"}]
    text = json.dumps(data, indent=2) if fmt == "json" else yaml.safe_dump(data, sort_keys=False)
    path = project.pipeline(text, fmt)
    line = line_with(text, needle if fmt == "json" else needle.strip('"') + ":")

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    assert f"{path}:{line}: pipelines.main[1].{said}" in " ".join(result.err.split()), result.err
    assert "fix:" in result.err


def test_a_schema_error_inside_checks_says_what_a_check_looks_like(project: Any, run_cli: Any) -> None:
    project.pipeline(doc(checks=[{"run": "x", "timeout": "soon"}]))

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2
    flat = " ".join(result.err.split())
    assert "checks[0].timeout: expected number, got 'soon'" in flat
    assert 'e.g. "checks": ["python -m pytest -q"]' in flat


def test_attempts_without_checks_is_a_warning(project: Any, run_cli: Any) -> None:
    project.pipeline(doc(attempts=2))

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 0, result.err
    assert "attempts: has no effect without checks" in " ".join(result.err.split())
