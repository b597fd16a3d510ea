"""`specd test` through a parallel group (issue 30): a case gives each member's reply and expects the group's
combined outcome as one place of the path; a run with a group records and replays as any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

SCRIPT = """\
- match: {step: security}
  outcome: revise
  summary: an injection in export.py
- match: {step: style}
  outcome: approve
  summary: fine
- match: {step: revise}
  summary: fixed the injection
"""


@pytest.fixture
def grouped(project: Any) -> Any:
    project.file(".specd/workflows/review.md", "---\ndescription: review\noutcomes: [approve, revise]\n---\n\n# r\n")
    project.file(".specd/workflows/revise.md", "---\ndescription: revise\n---\n\n{{ steps.reviews.summary }}\n")
    members = [{"name": name, "workflow": "review.md", "read_only": True} for name in ("security", "style")]
    project.pipeline({"schema_version": "1.0", "mode": "auto", "pipelines": {"main": [
        {"name": "reviews", "parallel": members, "combine": "any-revise",
         "outcomes": {"revise": "revise", "approve": "end"}},
        {"name": "revise", "workflow": "revise.md"}]}})
    return project


def case(security: str, path: list[dict[str, str]]) -> dict[str, Any]:
    return {"name": f"security says {security}", "steps": [
        {"step": "security", "outcome": security}, {"step": "style", "outcome": "approve"}],
        "expect": {"path": path, "status": "COMPLETE"}}


def test_a_case_gives_the_members_replies_and_expects_the_groups_outcome(grouped: Any, run_cli: Any) -> None:
    (grouped.root / ".specd" / "tests").mkdir()
    (grouped.root / ".specd" / "tests" / "reviews.yaml").write_text(yaml.safe_dump({"schema_version": "1.0", "cases": [
        case("revise", [{"reviews": "revise"}, {"revise": "done"}]),
        case("approve", [{"reviews": "approve"}]),
        case("approve", [{"reviews": "revise"}, {"revise": "done"}]) | {"name": "a wrong expectation"},
    ]}))

    result = run_cli("--project", str(grouped.root), "test")

    assert result.code == 1, result.out + result.err
    assert "PASS  reviews.yaml: security says revise" in result.out
    assert "PASS  reviews.yaml: security says approve" in result.out
    assert "FAIL  reviews.yaml: a wrong expectation" in result.out
    assert "expected reviews: revise, got reviews: approve" in result.out


def test_a_run_through_a_group_records_and_replays(grouped: Any, run_cli: Any) -> None:
    (grouped.root / "script.yaml").write_text(SCRIPT)
    assert run_cli("--project", str(grouped.root), "new", "t").code == 0
    ran = run_cli("--project", str(grouped.root), "continue", "t", "--agent", "scripted:script.yaml")
    assert ran.code == 0, ran.err
    assert run_cli("--project", str(grouped.root), "test", "--record", "t").code == 0
    recorded: Path = grouped.root / ".specd" / "tests" / "t.yaml"
    data = yaml.safe_load(recorded.read_text())["cases"][0]
    assert data["expect"]["path"] == [{"reviews": "revise"}, {"revise": "done"}]
    assert sorted(reply["step"] for reply in data["steps"]) == ["revise", "security", "style"]

    result = run_cli("--project", str(grouped.root), "test")

    assert result.code == 0, result.out + result.err
    assert "1 cases: 1 passed, 0 failed" in result.out
