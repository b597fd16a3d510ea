"""`parallel`, `combine` and `read_only` in the pipeline file: good forms load, bad ones are exit-2 errors at
their line, in JSON and YAML alike."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from specd.pipeline import load_pipeline
from specd.tasks.project import Project


def member(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "workflow": "review.md", "read_only": True, **extra}


def doc(group: dict[str, Any] | None = None, **over: Any) -> dict[str, Any]:
    entry = {"name": "reviews", "parallel": [member("security"), member("style")], "combine": "any-revise",
             "outcomes": {"revise": "revise"}, **over}
    return {"schema_version": "1.0", "pipelines": {"main": [
        {"name": "execute", "workflow": "execute.md"}, group or entry, {"name": "revise", "workflow": "revise.md"}]}}


def test_a_group_loads_with_its_members_and_its_combine_rules(project: Any) -> None:
    project.pipeline(doc(combine={"escalate": "any", "revise": "any", "approve": "all"}))

    config = load_pipeline(Project(project.root))
    group = config.step("main", "reviews")

    assert group.group
    assert [m.name for m in group.members] == ["security", "style"]
    assert all(m.read_only for m in group.members)
    assert group.combine == (("escalate", "any"), ("revise", "any"), ("approve", "all"))
    assert group.members[1].where == "pipelines.main[1].parallel[1]"
    assert not config.step("main", "execute").group


@pytest.mark.parametrize(("rule", "rules"), [("any-revise", (("revise", "any"), ("approve", "all"))),
                                             ("all-approve", (("approve", "all"), ("revise", "any")))])
def test_the_named_rules_are_maps_too(project: Any, rule: str, rules: Any) -> None:
    project.pipeline(doc(combine=rule))

    assert load_pipeline(Project(project.root)).step("main", "reviews").combine == rules


def with_member(**extra: Any) -> dict[str, Any]:
    return doc(parallel=[member("security"), member("style", **extra)])


BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("not-read-only", doc(parallel=[member("security"), {"name": "style", "workflow": "review.md"}]),
     '"name": "style"', "parallel[1]: member 'style' of group 'reviews' is not read-only"),
    ("read-only-false", with_member(read_only=False), '"read_only": false',
     "parallel[1].read_only: member 'style' of group 'reviews' is not read-only"),
    ("unknown-rule", doc(combine="any-revize"), '"combine"',
     "combine: unknown combine rule 'any-revize'; did you mean 'any-revise'?"),
    ("empty-parallel", doc(parallel=[]), '"parallel"', "parallel: must list at least one value"),
    ("outcome-a-member-cannot-give", doc(combine={"reject": "any", "approve": "all"}), '"combine"',
     "combine: group 'reviews' combines 'reject', 'approve', but member 'security' cannot give 'reject'"),
    ("bad-quantifier", doc(combine={"revise": "most", "approve": "all"}), '"combine"', "combine"),
    ("one-outcome-map", doc(combine={"approve": "all"}), '"combine"', "combine: a combine map needs at least two"),
    ("no-combine", doc(combine=None), '"parallel"', "parallel: a parallel group needs 'combine'"),
    ("combine-without-group", doc({"name": "reviews", "workflow": "review.md", "combine": "any-revise"}),
     '"combine"', "combine: 'combine' belongs on a group"),
    ("workflow-on-group", doc(workflow="plan.md"), '"workflow": "plan.md"',
     "workflow: 'workflow' does not work on a parallel group"),
    ("hooks-on-member", with_member(hooks={"pre": None}), '"hooks"',
     "parallel[1].hooks: 'hooks' does not work on member 'style' of group 'reviews'"),
    ("outcomes-on-member", with_member(outcomes={"revise": "end"}), '"outcomes": {\n',
     "parallel[1].outcomes: 'outcomes' does not work on member 'style'"),
    ("nested-group", with_member(parallel=[member("deep")], combine="all-approve"), '"combine": "all-approve"',
     "parallel[1].parallel: 'parallel' does not work on member 'style' of group 'reviews': groups do not nest"),
    ("member-named-like-a-step", doc(parallel=[member("security"), member("revise")]), '"name": "revise",',
     "parallel[1].name: member 'revise' of group 'reviews': the pipeline already has a step named 'revise'"),
    ("read-only-not-bool", with_member(read_only="yes"), '"read_only": "yes"',
     "parallel[1].read_only: expected boolean"),
    ("unknown-key-in-member", with_member(readonly=True), '"readonly"', "parallel[1].readonly: unknown key"),
]


def line_of(text: str, needle: str, fmt: str) -> int:
    if fmt == "yaml":
        key = needle.split(":")[0].strip().strip('"{')
        value = needle.split(":", 1)[1].strip().strip(",").strip('"') if ":" in needle else ""
        wanted = f"{key}: {value}" if value and "\n" not in needle and value not in ("[", "{") else f"{key}:"
        if key == "name":
            wanted = f"name: {value}"
        return next(i for i, line in enumerate(text.splitlines(), 1)
                    if wanted in line or wanted.replace(f": {value}", f": '{value}'") in line)
    needle = needle.split("\n")[0]
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("data", "needle", "said"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_form_is_an_exit_2_error_at_its_line_with_a_fix(project: Any, run_cli: Any, fmt: str,
                                                             data: dict[str, Any], needle: str, said: str) -> None:
    group = data["pipelines"]["main"][1]
    if group.get("combine", "") is None:
        del group["combine"]
    text = json.dumps(data, indent=2) if fmt == "json" else yaml.safe_dump(data, sort_keys=False)
    path = project.pipeline(text, fmt)

    result = run_cli("--project", str(project.root), "pipeline", "validate")

    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    flat = " ".join(result.err.split())
    assert f"pipelines.main[1].{said}" in flat, result.err
    if "bad-quantifier" not in said:
        assert f"{path}:{line_of(text, needle, fmt)}: pipelines.main[1]." in flat, result.err
    assert "fix:" in result.err
