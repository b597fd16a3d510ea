"""`specd pipeline validate|show`, project discovery and the CLI basics (issue 2's acceptance points)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from specd import __version__
from specd.resources import builtin_dir

STEP = {"name": "work", "workflow": "execute.md"}


def doc(pipelines: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", **top, "pipelines": pipelines}


def specd_proc(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `python -m specd`, as a user runs it, for exit codes and tracebacks."""
    return subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args],
                          cwd=cwd or root, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})


# --- validate: every acceptance error, as a real process -------------------------------------------

Setup = Callable[[Any], None]


def _both_workflow_and_pipeline(p: Any) -> None:
    p.pipeline(doc({"main": [{"name": "x", "workflow": "execute.md", "pipeline": "sub"}], "sub": [STEP]}))


def _no_name(p: Any) -> None:
    p.pipeline(doc({"main": [STEP, {"workflow": "execute.md"}]}))


def _missing_ref(p: Any) -> None:
    p.pipeline(doc({"main": [STEP, {"name": "later", "pipeline": "ghost"}]}))


def _cycle(p: Any) -> None:
    p.pipeline(doc({"main": [{"name": "go", "pipeline": "a"}],
                    "a": [{"name": "to-b", "pipeline": "b"}],
                    "b": [{"name": "to-a", "pipeline": "a"}]}))


def _version_2(p: Any) -> None:
    p.pipeline({"schema_version": "2.0", "pipelines": {"main": [STEP]}})


def _json_and_yaml(p: Any) -> None:
    p.pipeline(doc({"main": [STEP]}), "json")
    p.pipeline(doc({"main": [STEP]}), "yaml")


YAML_BAD_LINE_6 = ('schema_version: "1.0"\npipelines:\n  main:\n    - name: x\n'
                   "      workflow: execute.md\n     bad: indent\n")


def _yaml_syntax(p: Any) -> None:
    p.pipeline(YAML_BAD_LINE_6, "yaml")


def _missing_workflow(p: Any) -> None:
    p.pipeline(doc({"main": [STEP, {"name": "ghost", "workflow": "no-such-flow.md"}]}))


def _duplicate_names(p: Any) -> None:
    p.pipeline(doc({"main": [STEP, {"name": "other", "workflow": "plan.md"}, STEP]}))


def _mode_turbo(p: Any) -> None:
    p.pipeline(doc({"main": [STEP]}, mode="turbo"))


ERROR_CASES: list[tuple[str, Setup, list[str]]] = [
    ("both-workflow-and-pipeline", _both_workflow_and_pipeline,
     ["pipeline.json", "pipelines.main[0]", "workflow", "pipeline"]),
    ("step-without-name", _no_name, ["pipeline.json", "pipelines.main[1]", "name"]),
    ("missing-pipeline-ref", _missing_ref, ["pipeline.json", "pipelines.main[1].pipeline", "ghost"]),
    ("reference-cycle", _cycle, ["pipeline.json", "cycle"]),
    ("schema-version-2", _version_2, ["pipeline.json", "schema_version", "2.0", "1."]),
    ("json-and-yaml", _json_and_yaml, ["pipeline.json", "pipeline.yaml"]),
    ("yaml-syntax", _yaml_syntax, ["pipeline.yaml:6"]),
    ("missing-workflow", _missing_workflow, ["pipeline.json", "pipelines.main[1].workflow", "no-such-flow.md"]),
    ("duplicate-step-names", _duplicate_names, ["pipeline.json", "pipelines.main[2]", "'work'"]),
    ("mode-turbo", _mode_turbo, ["pipeline.json", "mode", "turbo", "semi-auto"]),
]


@pytest.mark.parametrize(("setup", "expected"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_validate_rejects_with_exit_2_and_a_located_message(project: Any, setup: Setup,
                                                             expected: list[str]) -> None:
    setup(project)
    proc = specd_proc(project.root, "pipeline", "validate")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    for text in expected:
        assert text in proc.stderr
    assert "fix:" in proc.stderr


def test_cycle_message_shows_the_cycle_path(project: Any, run_cli: Any) -> None:
    _cycle(project)
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert re.search(r"\ba → b → a\b|\bb → a → b\b", result.err), result.err
    assert "pipelines.a[0].pipeline" in result.err or "pipelines.b[0].pipeline" in result.err


def test_missing_workflow_lists_every_path_tried(project: Any, run_cli: Any) -> None:
    _missing_workflow(project)
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert str(project.root / ".specd" / "workflows" / "no-such-flow.md") in result.err
    assert str(builtin_dir("workflows") / "no-such-flow.md") in result.err


def test_schema_version_is_checked_before_the_schema(project: Any, run_cli: Any) -> None:
    # A file from a future specd should be told to upgrade, not drown in schema errors.
    project.pipeline({"schema_version": "2.0", "mode": "turbo", "pipelines": {"main": [{"workflow": 3}]}})
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "schema_version" in result.err
    assert "turbo" not in result.err


def test_every_semantic_problem_is_reported_at_once(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [STEP, STEP, {"name": "ref", "pipeline": "ghost"}]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "pipelines.main[1]" in result.err
    assert "pipelines.main[2].pipeline" in result.err


def test_invalid_json_names_line_and_column(project: Any, run_cli: Any) -> None:
    project.pipeline('{\n  "schema_version": "1.0",\n  "pipelines": {"main": [}\n}\n')
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert re.search(r"pipeline\.json:3:\d+: invalid JSON", result.err), result.err


# --- validate: warnings and the smaller rules ---------------------------------------------------------


def test_valid_project_pipeline_exits_0_and_says_ok(project: Any, run_cli: Any) -> None:
    path = project.pipeline(doc({"main": [STEP]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 0, result.err
    assert str(path) in result.out
    assert result.err == ""


def test_builtin_pipeline_validates(project: Any, run_cli: Any) -> None:
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 0, result.err
    assert "default.json" in result.out
    assert result.err == ""


def test_missing_schema_version_warns_and_passes(project: Any, run_cli: Any) -> None:
    project.pipeline({"pipelines": {"main": [STEP]}})
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 0
    assert "warning" in result.err
    assert "schema_version" in result.err
    assert "pipeline.json" in result.err


def test_unknown_keys_are_errors_with_their_line_and_path(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "colour": "blue"}]}, flavour="vanilla"))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2, result.err
    assert re.search(r"pipeline\.json:\d+: pipelines\.main\[0\]\.colour: unknown key 'colour'", result.err)
    assert re.search(r"pipeline\.json:\d+: flavour: unknown key 'flavour'", result.err)
    assert "Traceback" not in result.err


def test_pause_is_an_alias_of_pause_in_semi_auto(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "pause": True}, {"name": "plain", "workflow": "plan.md"}]}))
    result = run_cli("--project", str(project.root), "pipeline", "show", "--json")
    assert result.code == 0, result.err
    steps = result.json()["pipelines"]["main"]
    assert [s["pause_in_semi_auto"] for s in steps] == [True, False]


@pytest.mark.parametrize("where", ["step", "global"])
def test_hook_object_without_workflow_or_run_is_an_error(project: Any, run_cli: Any, where: str) -> None:
    bad = {"mode": "subagent", "optional": True}
    if where == "step":
        project.pipeline(doc({"main": [{**STEP, "hooks": {"pre": bad}}]}))
        place = "pipelines.main[0].hooks.pre"
    else:
        project.pipeline(doc({"main": [STEP]}, hooks={"post-step": bad}))
        place = "hooks.post-step"
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert place in result.err
    assert "workflow" in result.err
    assert "run" in result.err


def test_hook_object_with_both_workflow_and_run_is_an_error(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "hooks": {"post": {"workflow": "execute.md", "run": "true"}}}]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "pipelines.main[0].hooks.post" in result.err


def test_outcome_target_must_be_a_step_or_a_keyword(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "outcomes": {"approve": "end", "revise": "nowhere"}}]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "pipelines.main[0].outcomes.revise" in result.err
    assert "nowhere" in result.err
    assert "approve" not in result.err


def test_outcome_targets_naming_steps_and_keywords_pass(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "outcomes": {"again": "work", "ok": "next", "bail": "stop"}},
                                   {"name": "last", "workflow": "plan.md", "outcomes": {"back": "work"}}]}))
    assert run_cli("--project", str(project.root), "pipeline", "validate").code == 0


def test_foreach_on_a_workflow_step_is_an_error(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{**STEP, "foreach": "phases"}]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "pipelines.main[0]" in result.err
    assert "foreach" in result.err


def test_pipelines_without_main_is_an_error(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"other": [STEP]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "main" in result.err


def test_empty_yaml_file_is_an_error_not_a_crash(project: Any, run_cli: Any) -> None:
    project.pipeline("", "yaml")
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert "pipeline.yaml" in result.err


def test_yml_extension_is_found(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [STEP]}), "yml")
    result = run_cli("--project", str(project.root), "pipeline", "show", "--json")
    assert result.code == 0, result.err
    assert result.json()["source"] == str((project.specd / "pipeline.yml").resolve())


def test_validate_explicit_file(project: Any, run_cli: Any, tmp_path: Path) -> None:
    # The project's own file is broken; an explicit FILE is validated instead of it.
    project.pipeline(doc({"main": [STEP]}, mode="turbo"))
    good = tmp_path / "elsewhere" / "candidate.yaml"
    good.parent.mkdir()
    good.write_text(yaml.safe_dump(doc({"main": [STEP]})), encoding="utf-8")
    result = run_cli("--project", str(project.root), "pipeline", "validate", str(good))
    assert result.code == 0, result.err
    assert "candidate.yaml" in result.out

    bad = tmp_path / "elsewhere" / "broken.json"
    bad.write_text(json.dumps(doc({"main": [STEP, STEP]})), encoding="utf-8")
    result = run_cli("--project", str(project.root), "pipeline", "validate", str(bad))
    assert result.code == 2
    assert "broken.json" in result.err
    assert "pipelines.main[1]" in result.err


def test_validate_explicit_relative_file_from_cwd(project: Any, run_cli: Any) -> None:
    project.file("drafts/next.json", json.dumps(doc({"main": [STEP]})))
    result = run_cli("pipeline", "validate", "drafts/next.json", cwd=project.root)
    assert result.code == 0, result.err
    assert "next.json" in result.out


def test_validate_explicit_missing_file(project: Any, run_cli: Any) -> None:
    result = run_cli("--project", str(project.root), "pipeline", "validate", str(project.root / "nope.json"))
    assert result.code == 2
    assert "nope.json" in result.err


# --- show ---------------------------------------------------------------------------------------------


def _show(run_cli: Any, root: Path) -> dict[str, Any]:
    result = run_cli("--project", str(root), "pipeline", "show", "--json")
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


def test_show_builtin(project: Any, run_cli: Any) -> None:
    view = _show(run_cli, project.root)
    assert view["origin"] == "builtin"
    assert Path(view["source"]).is_file()
    assert view["mode"] == "interactive"
    assert [s["name"] for s in view["pipelines"]["main"]] == ["discuss", "research", "plan", "phases"]
    phases = view["pipelines"]["main"][3]
    assert (phases["pipeline"], phases["foreach"], phases["workflow_path"]) == ("phase-execution", "phases", None)
    inner = view["pipelines"]["phase-execution"]
    assert [s["name"] for s in inner] == ["plan", "execute", "review", "revise"]
    assert [s["pause_in_semi_auto"] for s in inner] == [False, True, True, True]
    assert inner[0]["workflow"] == "phase-plan.md"
    for steps in view["pipelines"].values():
        for step in steps:
            assert step["enabled"] is True
            if step["workflow"]:
                assert step["workflow_origin"] == "builtin"
                path = Path(step["workflow_path"])
                assert path.is_absolute()
                assert path.is_file()
                assert path.name == step["workflow"]
                assert path.read_text(encoding="utf-8").strip()


def test_project_workflow_overrides_the_builtin(project: Any, run_cli: Any) -> None:
    mine = project.file(".specd/workflows/execute.md", "# Execute, our way\n")
    view = _show(run_cli, project.root)
    steps = {s["name"]: s for s in view["pipelines"]["phase-execution"]}
    assert steps["execute"]["workflow_origin"] == "project"
    assert steps["execute"]["workflow_path"] == str(mine.resolve())
    assert steps["review"]["workflow_origin"] == "builtin"


def test_workflow_with_slash_is_relative_to_project_root(project: Any, run_cli: Any) -> None:
    custom = project.file("docs/flows/custom.md")
    project.file(".specd/workflows/custom.md")  # a bare-name lookup would find this one instead
    project.pipeline(doc({"main": [{"name": "custom", "workflow": "docs/flows/custom.md"}]}))
    view = _show(run_cli, project.root)
    step = view["pipelines"]["main"][0]
    assert step["workflow_path"] == str(custom.resolve())
    assert step["workflow_origin"] == "project"


def test_missing_workflow_with_slash_tries_only_the_project_root(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [{"name": "custom", "workflow": "docs/missing.md"}]}))
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    assert result.code == 2
    assert str(project.root / "docs" / "missing.md") in result.err
    assert str(builtin_dir("workflows")) not in result.err


def test_nested_three_levels(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({
        "main": [{"name": "start", "workflow": "discuss.md"}, {"name": "down", "pipeline": "middle"}],
        "middle": [{"name": "deeper", "pipeline": "bottom", "foreach": "phases"}],
        "bottom": [{"name": "execute", "workflow": "execute.md"}, {"name": "off", "workflow": "review.md",
                                                                    "enabled": False}],
    }, mode="semi-auto"))
    view = _show(run_cli, project.root)
    assert view["origin"] == "project"
    assert view["mode"] == "semi-auto"
    assert list(view["pipelines"]) == ["main", "middle", "bottom"]
    assert view["pipelines"]["middle"][0]["pipeline"] == "bottom"
    assert view["pipelines"]["middle"][0]["foreach"] == "phases"
    assert [s["enabled"] for s in view["pipelines"]["bottom"]] == [True, False]
    assert Path(view["pipelines"]["bottom"][0]["workflow_path"]).is_file()
    assert view["warnings"] == []

    text = run_cli("--project", str(project.root), "pipeline", "show")
    assert text.code == 0, text.err
    for name in ("main", "middle", "bottom", "execute"):
        assert name in text.out


def test_project_file_replaces_the_builtin_whole(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    view = _show(run_cli, project.root)
    assert list(view["pipelines"]) == ["main"]
    assert [s["name"] for s in view["pipelines"]["main"]] == ["work"]


SAME_PIPELINE = doc({
    "main": [
        {"name": "discuss", "workflow": "discuss.md", "pause": True, "max_visits": 2,
         "hooks": {"pre": {"run": "echo pre", "optional": True, "timeout": 5}, "post": None}},
        {"name": "phases", "pipeline": "per-phase", "foreach": "phases"},
    ],
    "per-phase": [
        {"name": "execute", "workflow": "execute.md", "model": "m-1", "max_turns": 7,
         "outcomes": {"done": "review"}},
        {"name": "review", "workflow": "review.md", "enabled": False, "outcomes": {"revise": "execute"}},
    ],
}, mode="auto", hooks={"pre-step": {"run": "true", "mode": "subagent"}, "post-step": None})


def test_json_and_yaml_show_identically(make_project: Any, run_cli: Any) -> None:
    as_json, as_yaml = make_project("j"), make_project("y")
    as_json.pipeline(SAME_PIPELINE, "json")
    as_yaml.pipeline(SAME_PIPELINE, "yaml")
    assert (as_yaml.specd / "pipeline.yaml").read_text().startswith("schema_version:")
    view_j, view_y = _show(run_cli, as_json.root), _show(run_cli, as_yaml.root)
    assert view_j["source"].endswith("pipeline.json")
    assert view_y["source"].endswith("pipeline.yaml")
    del view_j["source"], view_y["source"]
    assert view_j == view_y
    assert view_j["pipelines"]["main"][0]["hooks"]["pre"]["run"] == "echo pre"


# --- project discovery ---------------------------------------------------------------------------------


def test_project_option_points_anywhere(project: Any, run_cli: Any, tmp_path: Path) -> None:
    project.pipeline(doc({"main": [STEP]}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli("--project", str(project.root), "pipeline", "show", "--json", cwd=elsewhere)
    assert result.code == 0, result.err
    assert result.json()["source"] == str((project.specd / "pipeline.json").resolve())


def test_walks_up_from_a_subdirectory(project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    deep = project.root / "src" / "pkg" / "sub"
    deep.mkdir(parents=True)
    result = run_cli("pipeline", "show", "--json", cwd=deep)
    assert result.code == 0, result.err
    assert result.json()["source"] == str((project.specd / "pipeline.json").resolve())


def test_walk_up_finds_the_nearest_specd(project: Any, make_project: Any, run_cli: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    inner = make_project("proj/packages/inner")
    inner.pipeline(doc({"main": [{"name": "inner-step", "workflow": "plan.md"}]}))
    result = run_cli("pipeline", "show", "--json", cwd=inner.root / ".specd")
    assert result.code == 0, result.err
    assert result.json()["pipelines"]["main"][0]["name"] == "inner-step"


def test_subprocess_walks_up_too(project: Any) -> None:
    project.pipeline(doc({"main": [STEP]}))
    deep = project.root / "a" / "b"
    deep.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "specd", "pipeline", "validate"], cwd=deep,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert str(project.specd / "pipeline.json") in proc.stdout


# --- CLI basics ----------------------------------------------------------------------------------------


def test_version(run_cli: Any) -> None:
    result = run_cli("--version")
    assert result.code == 0
    assert __version__ in result.out


@pytest.mark.parametrize("argv", [[], ["pipeline"], ["pipeline", "validate"], ["pipeline", "show"],
                                  ["hooks"], ["init"]], ids=lambda a: " ".join(a) or "specd")
def test_help_on_every_command(run_cli: Any, argv: list[str], tmp_path: Path) -> None:
    result = run_cli(*argv, "--help", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "Usage:" in result.out
    assert result.err == ""
    assert not (tmp_path / ".specd").exists()  # --help never acts


def test_unknown_command_is_a_usage_error(run_cli: Any, tmp_path: Path) -> None:
    result = run_cli("no-such-command", cwd=tmp_path)
    assert result.code == 2


def test_pipeline_show_unknown_option_is_a_usage_error(run_cli: Any, tmp_path: Path) -> None:
    result = run_cli("pipeline", "show", "--yaml", cwd=tmp_path)
    assert result.code == 2
    assert "--yaml" in result.err
