"""`output:` and `when:` in the pipeline file and a workflow: bad forms are exit 2 at their line, JSON and YAML.

Every check goes through the real CLI (`specd pipeline validate`, `show --json`), in process; one runs
`python -m specd` to see that no traceback reaches the user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

OUTPUT = {"type": "object", "properties": {"files": {"type": "array"}, "docs": {"type": "boolean"}}}


def doc(*steps: dict[str, Any]) -> dict[str, Any]:
    steps = tuple({k: v for k, v in s.items() if v is not None} for s in steps)  # None: leave the key out
    return {"schema_version": "1.0", "pipelines": {"main": [
        {"name": "plan", "workflow": "plan.md"}, {"name": "execute", "workflow": "execute.md"}, *steps],
        "sub": [{"name": "inner", "workflow": "plan.md"}]}}


def setup(project: Any, fmt: str, *steps: dict[str, Any]) -> str:
    for name in ("plan", "execute", "docs"):
        project.file(f".specd/workflows/{name}.md", f"# {name}\n\nDo {name}.\n")
    path = project.pipeline(doc(*steps), fmt)
    return str(path)


def line_of(path: str, text: str) -> int:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


BAD = [
    ({"output": {"type": "array"}}, "output", 'needs "type": "object"'),
    ({"output": {"type": "object", "properties": {"files": {"type": "lists"}}}}, "output",
     "not a valid JSON Schema: output.properties.files.type"),
    ({"output": "files"}, "output", "expected a JSON Schema object"),
    ({"when": 5}, "when", "expected an expression such as `steps.plan.output.docs`, got 5"),
    ({"when": "steps.plan.output.docs =="}, "when", "is not an expression Jinja2 can read"),
    ({"when": "steps.plann.output.docs"}, "when", "no step named 'plann' in the pipeline; did you mean 'plan'?"),
    ({"when": "steps.plan.output.docs", "pipeline": "sub", "workflow": None}, "when",
     "'when' only works on a step with 'workflow'; put it on the steps inside pipeline 'sub'"),
]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("extra", "key", "said"), BAD)
def test_bad_output_and_when_are_exit_2_at_their_line(project: Any, run_cli: Any, fmt: str, extra: dict[str, Any],
                                                      key: str, said: str) -> None:
    path = setup(project, fmt, {"name": "docs", "workflow": "docs.md", **extra})

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2, result.out + result.err
    line = line_of(path, f'"{key}"' if fmt == "json" else f"{key}:")
    assert f"{path}:{line}: pipelines.main[2].{key}: " in result.err
    assert said in result.err
    assert "fix:" in result.err.lower()


def test_a_good_file_shows_output_and_when(project: Any, run_cli: Any) -> None:
    setup(project, "json", {"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"})
    data = doc({"name": "docs", "workflow": "docs.md", "when": "steps.plan.output.docs"})
    data["pipelines"]["main"][0]["output"] = OUTPUT
    project.pipeline(data)

    assert run_cli("--project", str(project.root), "pipeline", "validate").code == 0
    shown = run_cli("--project", str(project.root), "pipeline", "show", "--json").json()
    plan, _, docs = shown["pipelines"]["main"]
    assert plan["output"] == OUTPUT
    assert plan["when"] is None
    assert docs["when"] == "steps.plan.output.docs"
    text = run_cli("--project", str(project.root), "pipeline", "show")
    assert "when steps.plan.output.docs" in text.out
    assert "output: files, docs" in text.out


def test_a_workflow_naming_an_unknown_step_fails_at_load_with_its_line(project: Any) -> None:
    setup(project, "json")
    wf = project.file(".specd/workflows/execute.md", "---\ndescription: x\n---\n\n# Execute\n\n"
                                                    "Files: {{ steps.plna.output.files }}\n")

    proc = subprocess.run([sys.executable, "-m", "specd", "--project", str(project.root), "pipeline", "show"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"}, check=False)

    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{wf}:7: steps.plna: there is no step named 'plna' in the pipeline; did you mean 'plan'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_workflow_frontmatter_output_that_is_not_an_object_schema_fails_validate(project: Any,
                                                                                 run_cli: Any) -> None:
    setup(project, "json")
    wf = project.file(".specd/workflows/plan.md", "---\ndescription: x\noutput:\n  type: string\n---\n\n# Plan\n")

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2, result.out + result.err
    assert f"{wf}:3: frontmatter output: the output must be an object" in result.err


def test_text_that_names_no_step_is_left_alone(project: Any, run_cli: Any) -> None:
    setup(project, "yaml")
    project.file(".specd/workflows/execute.md", "# Execute\n\nCI says ${{ secrets.TOKEN }} and {{ name }}.\n")
    assert run_cli("--project", str(project.root), "pipeline", "validate").code == 0
