"""Issue 5 acceptance beyond the demo run: `specd init --pipeline yaml`, the built-in
workflows, and the README's promises (its first commands, its subcommands)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import frontmatter
import pytest
import yaml
from demo_helpers import snapshot, specd

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SETUP_LINES = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && specd demo",
    "pytest",
]


def _main_order(project: Path) -> list[str]:
    shown = specd("pipeline", "show", "--json", cwd=project)
    assert shown.returncode == 0, shown.stderr
    return [step["name"] for step in json.loads(shown.stdout)["pipelines"]["main"]]


def test_init_yaml_validates_reorders_and_is_idempotent(tmp_path: Path) -> None:
    created = specd("init", "--pipeline", "yaml", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    pipeline_file = tmp_path / ".specd" / "pipeline.yaml"
    assert pipeline_file.is_file()
    assert not (tmp_path / ".specd" / "pipeline.json").exists()

    valid = specd("pipeline", "validate", cwd=tmp_path)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "pipeline.yaml" in valid.stdout
    assert _main_order(tmp_path)[:2] == ["discuss", "research"]

    data = yaml.safe_load(pipeline_file.read_text(encoding="utf-8"))
    main = data["pipelines"]["main"]
    main[0], main[1] = main[1], main[0]
    pipeline_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    assert specd("pipeline", "validate", cwd=tmp_path).returncode == 0
    assert _main_order(tmp_path)[:2] == ["research", "discuss"]

    before = snapshot(tmp_path)
    for args in (("init",), ("init", "--pipeline", "yaml"), ("init", "--pipeline", "json")):
        again = specd(*args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert snapshot(tmp_path) == before, args
    assert _main_order(tmp_path)[:2] == ["research", "discuss"]


BUILTIN_WORKFLOWS = sorted((REPO / "workflows").glob("*.md"))


def test_the_builtin_workflows_are_all_there() -> None:
    names = {p.stem for p in BUILTIN_WORKFLOWS}
    assert {"discuss", "research", "plan", "phase-plan", "execute", "review", "revise"} <= names


@pytest.mark.parametrize("path", BUILTIN_WORKFLOWS, ids=lambda p: p.name)
def test_builtin_workflow_frontmatter(path: Path) -> None:
    meta = frontmatter.load(str(path)).metadata
    assert isinstance(meta.get("description"), str)
    assert meta["description"].strip()
    outcomes = meta.get("outcomes")
    assert isinstance(outcomes, list)
    assert outcomes
    assert all(isinstance(o, str) and o for o in outcomes)


def test_review_outcomes_match_the_default_pipeline() -> None:
    review = frontmatter.load(str(REPO / "workflows" / "review.md")).metadata
    assert set(review["outcomes"]) == {"approve", "revise", "escalate"}
    default = json.loads((REPO / "pipelines" / "default.json").read_text(encoding="utf-8"))
    step = next(s for s in default["pipelines"]["phase-execution"] if s["name"] == "review")
    assert step["outcomes"]["approve"] == "end"
    assert step["outcomes"]["revise"] == "revise"
    assert step["outcomes"]["escalate"] == "stop"
    assert "max_visits" in step


def test_builtin_pipeline_validates(tmp_path: Path) -> None:
    result = specd("pipeline", "validate", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    explicit = specd("pipeline", "validate", str(REPO / "pipelines" / "default.json"), cwd=tmp_path)
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr


def _code_blocks(text: str) -> list[list[str]]:
    return [block.strip("\n").splitlines() for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)]


def test_readme_starts_with_the_two_setup_commands() -> None:
    blocks = _code_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no fenced code block"
    assert blocks[0] == SETUP_LINES


def _mentioned_commands(text: str) -> set[tuple[str, ...]]:
    """Every `specd <sub> [<subsub>]` command in code blocks and inline code spans."""
    code = [line for block in _code_blocks(text) for line in block]
    code += re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    found: set[tuple[str, ...]] = set()
    for line in code:
        # specd as a command: at the start, or after a shell operator (not `ruff check specd tests`).
        for sub, rest in re.findall(r"(?:^|[|&;(]\s*)specd ([a-z][a-z-]*)((?: [a-z][a-z-]*)?)", line.strip()):
            found.add((sub, rest.strip()) if sub == "pipeline" and rest.strip() else (sub,))
    return found


def test_readme_mentions_only_real_subcommands(tmp_path: Path) -> None:
    mentioned = _mentioned_commands(README.read_text(encoding="utf-8"))
    assert {("demo",), ("init",), ("new",), ("continue",), ("status",), ("hooks",)} <= mentioned
    for command in sorted(mentioned):
        result = specd(*command, "--help", cwd=tmp_path)
        assert result.returncode == 0, f"specd {' '.join(command)} --help: {result.stderr}"
