"""The pipeline loader, called directly: file discovery, version gate, schema, semantics, records, resolution."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from specd.errors import ConfigError
from specd.pipeline import HookSpec, load_pipeline, load_pipeline_file
from specd.pipeline.load import find_pipeline_file
from specd.pipeline.resolve import resolve_workflow, step_hook
from specd.resources import builtin, builtin_dir
from specd.tasks.project import Project, find_project

STEP = {"name": "work", "workflow": "execute.md"}


def doc(pipelines: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", **top, "pipelines": pipelines}


def load(p: Any) -> Any:
    return load_pipeline(Project(p.root))


def error_of(p: Any) -> str:
    with pytest.raises(ConfigError) as info:
        load(p)
    return str(info.value)


# --- finding the file -------------------------------------------------------------------------------


def test_builtin_when_the_project_has_no_file(project: Any) -> None:
    path, is_builtin = find_pipeline_file(Project(project.root))
    assert is_builtin
    assert path == builtin("pipelines", "default.json")
    config = load(project)
    assert config.builtin
    assert config.warnings == ()
    assert list(config.pipelines) == ["main", "phase-execution"]


@pytest.mark.parametrize("fmt", ["json", "yaml", "yml"])
def test_project_file_in_any_format_replaces_the_builtin(project: Any, fmt: str) -> None:
    written = project.pipeline(doc({"main": [STEP]}), fmt)
    config = load(project)
    assert not config.builtin
    assert config.source == written.resolve()
    assert [s.name for s in config.steps("main")] == ["work"]
    assert "phase-execution" not in config.pipelines


@pytest.mark.parametrize(("first", "second"), [("json", "yaml"), ("json", "yml"), ("yaml", "yml")])
def test_two_project_files_is_an_error(project: Any, first: str, second: str) -> None:
    project.pipeline(doc({"main": [STEP]}), first)
    project.pipeline(doc({"main": [STEP]}), second)
    message = error_of(project)
    assert f"pipeline.{first}" in message
    assert f"pipeline.{second}" in message


def test_builtin_resources_exist() -> None:
    for kind in ("pipelines", "workflows", "hooks", "schemas", "templates"):
        assert builtin_dir(kind).is_dir()
    assert builtin("schemas", "pipeline.schema.json").is_file()
    with pytest.raises(ValueError, match="unknown resource kind"):
        builtin_dir("secrets")


# --- version gate -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "1.7", 1, 1.2, "1"])
def test_any_1x_version_is_accepted(project: Any, version: Any) -> None:
    project.pipeline({"schema_version": version, "pipelines": {"main": [STEP]}})
    assert load(project).warnings == ()


@pytest.mark.parametrize("version", ["2.0", "0.9", 3, "v1", ""])
def test_other_versions_are_errors_naming_the_fix(project: Any, version: Any) -> None:
    project.pipeline({"schema_version": version, "pipelines": {"main": [STEP]}})
    message = error_of(project)
    assert "schema_version" in message
    assert "1.0" in message  # the fix says what to write
    assert "fix:" in message


def test_missing_version_is_a_warning(project: Any) -> None:
    project.pipeline({"pipelines": {"main": [STEP]}})
    config = load(project)
    assert len(config.warnings) == 1
    assert "schema_version" in config.warnings[0]


# --- schema and semantics ---------------------------------------------------------------------------


def test_unknown_keys_are_errors_everywhere_naming_line_and_path(project: Any) -> None:
    project.file(".specd/hooks/check.md")
    project.pipeline(doc({"main": [{**STEP, "colour": 1, "hooks": {"pre": {"workflow": "check.md", "why": 2}}}]},
                         extra=True, agent={"backend": "scripted", "temperature": 0.5}))
    message = error_of(project)
    lines = project.root.joinpath(".specd", "pipeline.json").read_text().splitlines()
    for place, key in (("extra", "extra"), ("pipelines.main[0].colour", "colour"),
                       ("pipelines.main[0].hooks.pre.why", "why"), ("agent.temperature", "temperature")):
        found = re.search(rf"pipeline\.json:(\d+): {re.escape(place)}: unknown key '{key}'", message)
        assert found, (place, message)
        assert f'"{key}"' in lines[int(found.group(1)) - 1]  # the line named is the line the key is on
    assert "fix: rename or remove the unknown keys" in message


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_near_miss_says_did_you_mean(project: Any, fmt: str) -> None:
    project.pipeline(doc({"main": [STEP, {"name": "off", "workflow": "plan.md", "enabeld": False}]}), fmt)
    message = error_of(project)
    assert "pipelines.main[1].enabeld: unknown key 'enabeld'; did you mean 'enabled'?" in message
    line = int(re.search(rf"pipeline\.{fmt}:(\d+): pipelines", message).group(1))  # type: ignore[union-attr]
    assert "enabeld" in project.root.joinpath(".specd", f"pipeline.{fmt}").read_text().splitlines()[line - 1]


def test_json_duplicate_keys_are_an_error_naming_both_lines(project: Any) -> None:
    project.pipeline('{\n  "schema_version": "1.0",\n  "pipelines": {"main": [\n'
                     '    {"name": "a", "workflow": "plan.md",\n     "name": "b"}]},\n  "mode": "auto"\n}\n')
    message = error_of(project)
    assert "pipeline.json:5: pipelines.main[0].name: duplicate key 'name' (first at line 4, again at line 5)" in message
    assert "fix: keep one of the two keys" in message


def test_equal_keys_in_different_objects_are_not_duplicates(project: Any) -> None:
    project.pipeline(doc({"main": [STEP, {"name": "two", "workflow": "plan.md"}]}))
    assert [s.name for s in load(project).steps("main")] == [STEP["name"], "two"]


def test_pause_alias_and_its_conflict(project: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "pause": True},
                                   {"name": "both", "workflow": "plan.md", "pause": True, "pause_in_semi_auto": False},
                                   {"name": "none", "workflow": "plan.md"}]}))
    config = load(project)
    assert [s.pause_in_semi_auto for s in config.steps("main")] == [True, False, False]
    assert any("pipelines.main[1]" in w and "pause" in w for w in config.warnings)


def test_unreferenced_pipeline_warns(project: Any) -> None:
    project.pipeline(doc({"main": [STEP], "orphan": [STEP]}))
    config = load(project)
    assert any("orphan" in w for w in config.warnings)


def test_self_reference_is_a_cycle(project: Any) -> None:
    project.pipeline(doc({"main": [STEP, {"name": "again", "pipeline": "main"}]}))
    assert "main → main" in error_of(project)


def test_cycle_not_through_main_is_found(project: Any) -> None:
    project.pipeline(doc({"main": [STEP], "x": [{"name": "to-y", "pipeline": "y"}],
                          "y": [{"name": "to-x", "pipeline": "x"}]}))
    message = error_of(project)
    assert "x → y → x" in message or "y → x → y" in message


def test_diamond_references_are_not_a_cycle(project: Any) -> None:
    project.pipeline(doc({"main": [{"name": "l", "pipeline": "left"}, {"name": "r", "pipeline": "right"}],
                          "left": [{"name": "s", "pipeline": "shared"}],
                          "right": [{"name": "s", "pipeline": "shared"}],
                          "shared": [STEP]}))
    assert set(load(project).pipelines) == {"main", "left", "right", "shared"}


def test_same_step_name_in_different_pipelines_is_fine(project: Any) -> None:
    project.pipeline(doc({"main": [STEP, {"name": "sub", "pipeline": "inner"}], "inner": [STEP]}))
    assert [s.name for s in load(project).steps("inner")] == ["work"]


@pytest.mark.parametrize(("raw", "place"), [
    ({"hooks": {"pre": 5}}, "pipelines.main[0].hooks.pre"),
    ({"hooks": {"pre": {"run": "true", "mode": "sideways"}}}, "pipelines.main[0].hooks.pre.mode"),
    ({"hooks": {"post": {"run": "true", "timeout": 0}}}, "pipelines.main[0].hooks.post.timeout"),
    ({"enabled": "no"}, "pipelines.main[0].enabled"),
    ({"max_turns": 0}, "pipelines.main[0].max_turns"),
    ({"outcomes": {"done": 5}}, "pipelines.main[0].outcomes.done"),
    ({"foreach": "files"}, "pipelines.main[0].foreach"),
])
def test_schema_errors_name_the_json_path(project: Any, raw: dict[str, Any], place: str) -> None:
    project.pipeline(doc({"main": [{**STEP, **raw}]}))
    message = error_of(project)
    assert re.search(rf"pipeline\.json:\d+: {re.escape(place)}:", message), message  # with the line of its key


def test_empty_pipeline_and_bad_pipeline_name(project: Any) -> None:
    project.pipeline(doc({"main": []}))
    assert "pipelines.main" in error_of(project)
    project.pipeline(doc({"main": [STEP], "has space": [STEP]}))
    assert "has space" in error_of(project)


def test_top_level_must_be_a_mapping(project: Any) -> None:
    project.pipeline("- just\n- a list\n", "yaml")
    assert "mapping" in error_of(project)


def test_yaml_refuses_python_tags(project: Any) -> None:
    project.pipeline('schema_version: "1.0"\npipelines: {main: [{name: x, workflow: !!python/name:os.system }]}\n',
                     "yaml")
    assert "pipeline.yaml:2" in error_of(project)


# --- unknown hook points are errors, whatever their value ---------------------------------------------


def test_unknown_hook_point_with_any_value_is_an_error(project: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "hooks": {"before": True}}]}, hooks={"pre_step": 5}))
    proc = subprocess.run([sys.executable, "-m", "specd", "--project", str(project.root), "pipeline", "validate"],
                          capture_output=True, text=True, timeout=60, cwd=project.root,
                          env={**os.environ, "NO_COLOR": "1"})
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert "hooks.pre_step: unknown key 'pre_step'; did you mean 'pre-step'?" in proc.stderr
    assert "pipelines.main[0].hooks.before: unknown key 'before'" in proc.stderr


# --- records ------------------------------------------------------------------------------------------


def test_records_are_frozen(project: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "outcomes": {"done": "next"}, "hooks": {"pre": {"run": "true"}}}]}))
    config = load(project)
    step = config.steps("main")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.mode = "auto"  # type: ignore[misc]
    with pytest.raises(TypeError):
        step.outcomes["done"] = "end"  # type: ignore[index]
    with pytest.raises(TypeError):
        config.pipelines["extra"] = ()  # type: ignore[index]
    assert isinstance(config.pipelines["main"], tuple)


def test_records_carry_every_field(project: Any) -> None:
    project.pipeline(doc({
        "main": [{"name": "s", "workflow": "execute.md", "enabled": False, "pause_in_semi_auto": True,
                  "model": "m", "max_turns": 3, "max_visits": 2, "stage": "execution", "description": "d",
                  "outcomes": {"again": "s"},
                  "hooks": {"pre": "execute.md", "post": {"run": "make test", "mode": "subagent",
                                                          "optional": True, "timeout": 9}}},
                 {"name": "p", "pipeline": "inner", "foreach": "phases"}],
        "inner": [STEP],
    }, mode="auto", hooks={"pre-step": None}, agent={"backend": "scripted", "max_turns": 4}))
    config = load(project)
    s, p = config.steps("main")
    assert (s.enabled, s.pause_in_semi_auto, s.model, s.max_turns, s.max_visits, s.stage, s.description) == \
           (False, True, "m", 3, 2, "execution", "d")
    assert s.where == "pipelines.main[0]"
    assert s.hooks["pre"] == HookSpec(workflow="execute.md")
    assert s.hooks["post"] == HookSpec(run="make test", mode="subagent", optional=True, timeout=9.0)
    assert (p.pipeline, p.foreach, p.workflow) == ("inner", "phases", None)
    assert config.mode == "auto"
    assert config.hooks == {"pre-step": None}
    assert config.agent["max_turns"] == 4
    assert s.target("again") == "s"
    assert s.target("anything") == "next"
    assert config.index_of("main", "p") == 1


def test_defaults(project: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    config = load(project)
    step = config.steps("main")[0]
    assert (step.enabled, step.pause_in_semi_auto, step.foreach, step.pipeline) == (True, False, None, None)
    assert dict(step.hooks) == {}
    assert config.mode is None
    assert HookSpec.create({"run": "x"}) == HookSpec(run="x", mode="inline", optional=False, timeout=None)


def test_digest_follows_content_not_format(project: Any, make_project: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    other = make_project("other")
    other.pipeline(doc({"main": [STEP]}), "yaml")
    first = load(project).digest
    assert load(other).digest == first
    project.pipeline(doc({"main": [{**STEP, "enabled": False}]}))
    assert load(project).digest != first


def test_load_pipeline_file_explicit_path(project: Any, tmp_path: Path) -> None:
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(doc({"main": [STEP]})), encoding="utf-8")
    config = load_pipeline_file(path, Project(project.root))
    assert config.source == path.resolve()
    assert not config.builtin


# --- workflow and hook resolution -------------------------------------------------------------------------


def test_bare_name_prefers_the_project_then_the_builtin(project: Any) -> None:
    proj = Project(project.root)
    found = resolve_workflow("review.md", proj, where="here")
    assert (found.path, found.origin) == (builtin("workflows", "review.md").resolve(), "builtin")
    mine = project.file(".specd/workflows/review.md")
    found = resolve_workflow("review.md", proj, where="here")
    assert (found.path, found.origin) == (mine.resolve(), "project")


def test_hook_names_look_in_hooks_then_workflows_then_builtins(project: Any) -> None:
    proj = Project(project.root)
    assert resolve_workflow("pre-review.md", proj, where="h", hook=True).path == \
        builtin("hooks", "pre-review.md").resolve()
    in_workflows = project.file(".specd/workflows/pre-review.md")
    assert resolve_workflow("pre-review.md", proj, where="h", hook=True).path == in_workflows.resolve()
    in_hooks = project.file(".specd/hooks/pre-review.md")
    assert resolve_workflow("pre-review.md", proj, where="h", hook=True).path == in_hooks.resolve()


def test_missing_hook_file_lists_all_four_places(project: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "hooks": {"post": "lint.md"}}]}))
    message = error_of(project)
    assert "pipelines.main[0].hooks.post" in message
    for folder in (project.specd / "hooks", project.specd / "workflows", builtin_dir("hooks"),
                   builtin_dir("workflows")):
        assert str(folder / "lint.md") in message


def test_step_hook_resolution_order(project: Any) -> None:
    project.file(".specd/hooks/pre-work.md")
    project.file(".specd/hooks/post-work.md")
    project.file(".specd/hooks/mine.md")
    project.pipeline(doc({"main": [{**STEP, "hooks": {"pre": "mine.md", "post": None}},
                                   {"name": "plain", "workflow": "plan.md"}]}))
    config = load(project)
    proj = Project(project.root)
    work, plain = config.steps("main")
    pre = step_hook(config, "main", work, "pre", proj)
    assert pre is not None
    assert (pre.source, pre.path) == ("explicit", (project.specd / "hooks" / "mine.md").resolve())
    assert step_hook(config, "main", work, "post", proj) is None  # explicit null beats the convention
    assert step_hook(config, "main", plain, "pre", proj) is None


def test_find_project(tmp_path: Path, make_project: Any) -> None:
    proj = make_project("root")
    deep = proj.root / "x" / "y"
    deep.mkdir(parents=True)
    assert find_project(start=deep).root == proj.root.resolve()
    assert find_project(start=deep, explicit=tmp_path).root == tmp_path.resolve()
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    if any((d / ".specd").is_dir() for d in lonely.parents):
        pytest.skip("a folder above tmp_path holds .specd/")
    assert find_project(start=lonely).root == lonely.resolve()


def test_a_repository_inside_another_project_is_a_project_of_its_own(tmp_path: Path, make_project: Any) -> None:
    """A repository cloned inside a folder that holds .specd/ (another project's) is not that project: `specd init`
    there sets it up, and every command, the kept `status` answer included, stays in it."""
    import subprocess
    import sys

    outer = make_project("outer")
    inner = outer.root / "clone" / "src"
    inner.mkdir(parents=True)
    (outer.root / "clone" / ".git").mkdir()  # a repository's top
    assert find_project(start=inner).root == (outer.root / "clone").resolve() / "src"
    assert find_project(start=outer.root / "clone").root == (outer.root / "clone").resolve()
    assert find_project(start=outer.root / "elsewhere").root == outer.root.resolve()  # no repository: as before
    (outer.root / "clone" / ".specd").mkdir()
    assert find_project(start=inner).root == (outer.root / "clone").resolve()  # its own, from a subfolder
    code = "from specd.tasks.readmodel.inputs import project_root; print(project_root(None))"
    for start, root in ((inner, outer.root / "clone"), (outer.root / "clone" / ".specd", outer.root / "clone")):
        shown = subprocess.run([sys.executable, "-c", code], cwd=start, capture_output=True, text=True, check=True)
        assert shown.stdout.strip() == str(root.resolve())
    (outer.root / "clone" / ".specd").rmdir()
    shown = subprocess.run([sys.executable, "-c", code], cwd=inner, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == str(inner.resolve())
