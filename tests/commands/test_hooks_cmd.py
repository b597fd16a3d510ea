"""`specd hooks`: which hook runs around each step, and why (explicit, convention, global)."""

from __future__ import annotations

import json
from typing import Any

STEP = {"name": "work", "workflow": "execute.md"}


def doc(pipelines: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", **top, "pipelines": pipelines}


def rows_of(run_cli: Any, p: Any, *args: str) -> list[dict[str, Any]]:
    result = run_cli("--project", str(p.root), "hooks", "--json", *args)
    assert result.code == 0, result.err
    rows: list[dict[str, Any]] = result.json()["hooks"]
    return rows


def row(rows: list[dict[str, Any]], pipeline: str, step: str, point: str) -> dict[str, Any]:
    matches = [r for r in rows if (r["pipeline"], r["step"], r["point"]) == (pipeline, step, point)]
    assert len(matches) == 1, matches
    return matches[0]


def test_builtin_pipeline_has_one_row_per_step_and_point_and_no_hooks(run_cli: Any, project: Any) -> None:
    rows = rows_of(run_cli, project)
    keys = [(r["pipeline"], r["step"], r["point"]) for r in rows]
    expected = [(p, s, point) for p, steps in (("main", ("discuss", "research", "plan")),
                                               ("phase-execution", ("plan", "execute", "review", "revise")))
                for s in steps for point in ("pre", "post")]
    assert keys == expected  # the `phases` reference step runs no hooks of its own
    assert all(r["hook"] is None and r["source"] is None and r["status"] == "enabled" for r in rows)


def test_convention_hook_is_found(run_cli: Any, project: Any) -> None:
    hook = project.file(".specd/hooks/pre-execute.md", "# Before execute\n\nCheck the branch is clean.\n")
    rows = rows_of(run_cli, project)
    pre = row(rows, "phase-execution", "execute", "pre")
    assert pre["source"] == "convention"
    assert pre["path"] == str(hook.resolve())
    assert pre["hook"] == "pre-execute.md"
    assert (pre["mode"], pre["optional"]) == ("inline", False)
    assert row(rows, "phase-execution", "execute", "post")["hook"] is None
    assert row(rows, "phase-execution", "review", "pre")["hook"] is None


def test_convention_applies_to_every_step_of_that_name(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/post-plan.md")
    rows = rows_of(run_cli, project)
    assert row(rows, "main", "plan", "post")["source"] == "convention"
    assert row(rows, "phase-execution", "plan", "post")["source"] == "convention"


def test_explicit_hook_wins_over_convention(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/pre-execute.md")
    mine = project.file(".specd/hooks/careful.md")
    project.pipeline(doc({"main": [{"name": "execute", "workflow": "execute.md", "hooks": {"pre": "careful.md"}}]}))
    pre = row(rows_of(run_cli, project), "main", "execute", "pre")
    assert pre["source"] == "explicit"
    assert pre["path"] == str(mine.resolve())


def test_explicit_run_hook_object(run_cli: Any, project: Any) -> None:
    project.pipeline(doc({"main": [{"name": "execute", "workflow": "execute.md",
                                    "hooks": {"post": {"run": "make test", "mode": "subagent", "optional": True,
                                                       "timeout": 30}}}]}))
    post = row(rows_of(run_cli, project), "main", "execute", "post")
    assert post["source"] == "explicit"
    assert (post["run"], post["path"], post["mode"], post["optional"]) == ("make test", None, "subagent", True)


def test_explicit_null_suppresses_the_convention_hook(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/pre-execute.md")
    project.file(".specd/hooks/post-execute.md")
    project.pipeline(doc({"main": [{"name": "execute", "workflow": "execute.md", "hooks": {"pre": None}}]}))
    rows = rows_of(run_cli, project)
    assert row(rows, "main", "execute", "pre")["hook"] is None
    assert row(rows, "main", "execute", "post")["source"] == "convention"


def test_disabled_step_shows_disabled_and_no_hooks(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/pre-execute.md")
    project.file(".specd/hooks/check.md")
    project.pipeline(doc({"main": [STEP, {"name": "execute", "workflow": "execute.md", "enabled": False,
                                          "hooks": {"post": "check.md"}}]}))
    rows = rows_of(run_cli, project)
    for point in ("pre", "post"):
        disabled = row(rows, "main", "execute", point)
        assert disabled["status"] == "disabled"
        assert (disabled["hook"], disabled["source"], disabled["path"]) == (None, None, None)
    assert row(rows, "main", "work", "pre")["status"] == "enabled"

    text = run_cli("--project", str(project.root), "hooks")
    assert text.code == 0, text.err
    assert "disabled" in text.out


def test_global_hooks_have_their_own_rows(run_cli: Any, project: Any) -> None:
    gate = project.file(".specd/hooks/gate.md")
    project.pipeline(doc({"main": [STEP]}, hooks={"pre-step": "gate.md", "post-step": {"run": "git status"}}))
    rows = rows_of(run_cli, project)
    pre, post = rows[0], rows[1]
    assert (pre["pipeline"], pre["step"], pre["point"], pre["source"]) == ("*", "*", "pre-step", "global")
    assert pre["path"] == str(gate.resolve())
    assert (post["point"], post["source"], post["run"], post["path"]) == ("post-step", "global", "git status", None)
    # the global hooks are not repeated as the step's own
    assert row(rows, "main", "work", "pre")["hook"] is None


def test_convention_file_is_not_a_global_hook(run_cli: Any, project: Any) -> None:
    # Global hooks come from the pipeline file only.
    project.file(".specd/hooks/pre-step.md")
    rows = rows_of(run_cli, project)
    assert not [r for r in rows if r["source"] == "global"]


def test_step_filter(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/pre-review.md")
    rows = rows_of(run_cli, project, "--step", "review")
    assert {(r["pipeline"], r["step"]) for r in rows} == {("phase-execution", "review")}
    assert [r["point"] for r in rows] == ["pre", "post"]
    assert rows[0]["source"] == "convention"


def test_step_filter_with_globals_keeps_them(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/gate.md")
    project.pipeline(doc({"main": [STEP, {"name": "other", "workflow": "plan.md"}]}, hooks={"pre-step": "gate.md"}))
    rows = rows_of(run_cli, project, "--step", "other")
    assert [(r["step"], r["point"]) for r in rows] == [("*", "pre-step"), ("other", "pre"), ("other", "post")]


def test_unknown_step_is_exit_2_with_the_choices(run_cli: Any, project: Any) -> None:
    result = run_cli("--project", str(project.root), "hooks", "--step", "deploy", "--json")
    assert result.code == 2
    assert result.json()["error"]["code"] == 2  # --json: the error envelope, and the message on stderr too
    assert "deploy" in result.err
    assert "execute" in result.err  # names the steps there are


def test_hooks_fails_cleanly_on_a_broken_pipeline(run_cli: Any, project: Any) -> None:
    project.pipeline(doc({"main": [STEP]}, mode="turbo"))
    result = run_cli("--project", str(project.root), "hooks")
    assert result.code == 2
    assert "turbo" in result.err


def test_table_output(run_cli: Any, project: Any) -> None:
    project.file(".specd/hooks/pre-execute.md")
    result = run_cli("--project", str(project.root), "hooks")
    assert result.code == 0, result.err
    assert "pre-execut" in result.out  # rich may shorten it to fit 80 columns when not on a terminal
    assert "convention" in result.out


def test_pipeline_show_reports_the_same_hooks(run_cli: Any, project: Any) -> None:
    hook = project.file(".specd/hooks/pre-execute.md")
    project.file(".specd/hooks/gate.md")
    project.pipeline(doc({"main": [{"name": "execute", "workflow": "execute.md"}]},
                         hooks={"post-step": "gate.md"}))
    result = run_cli("--project", str(project.root), "pipeline", "show", "--json")
    assert result.code == 0, result.err
    view = result.json()
    assert view["hooks"]["pre-step"] is None
    assert view["hooks"]["post-step"]["source"] == "global"
    hooks = view["pipelines"]["main"][0]["hooks"]
    assert hooks["pre"]["source"] == "convention"
    assert hooks["pre"]["path"] == str(hook.resolve())
    assert hooks["post"] is None


def test_a_hook_file_that_does_not_load_is_listed_then_named_with_its_fix(run_cli: Any, project: Any) -> None:
    """Found by hand: `specd hooks` listed a hook whose frontmatter does not parse as if it would run, exit 0."""
    hook = project.file(".specd/hooks/pre-execute.md", "---\nrun: [\n---\nbody\n")
    shown = run_cli("--project", str(project.root), "hooks")
    assert shown.code == 2
    assert "convention" in shown.out  # the listing is still printed
    assert f"{hook}:3: invalid YAML frontmatter" in shown.err
    as_json = run_cli("--project", str(project.root), "hooks", "--json")
    assert as_json.code == 2
    error = as_json.json()["error"]
    assert error["message"].startswith(f"{hook}:3: invalid YAML frontmatter")
    assert "fix:" not in error["message"]
    assert error["fix"].startswith("fix the YAML between the '---' lines")


def test_a_hook_file_named_for_no_step_is_said_with_the_name_it_may_mean(run_cli: Any, project: Any) -> None:
    """Found by hand: `.specd/hooks/pre-discus.md` (a typo) was listed nowhere and never ran, silently."""
    project.file(".specd/hooks/pre-discus.md", "# Before discuss\n\nCheck.\n")
    project.file(".specd/hooks/post-execute.md", "# After execute\n\nCheck.\n")  # a step of that name: runs
    project.file(".specd/hooks/pre-gate.md", "# Named by the pipeline file\n\nCheck.\n")
    project.file(".specd/pipeline.json", json.dumps(doc(
        {"main": [{"name": "discuss", "workflow": "discuss.md", "hooks": {"post": "pre-gate.md"}},
                  {"name": "execute", "workflow": "execute.md"}]})))

    listed = run_cli("--project", str(project.root), "hooks")
    checked = run_cli("--project", str(project.root), "pipeline", "validate", "--json")

    said = (".specd/hooks/pre-discus.md never runs: no step is named 'discus'; did you mean pre-discuss.md? (a "
            "pre-<step>.md hook runs before the step it names; rename it, or name it in the pipeline file's hooks)")
    assert listed.code == 0, listed.err
    assert said in listed.err
    assert checked.code == 0, checked.err
    assert checked.json()["warnings"] == [said]  # neither the hook of a step nor a file the pipeline names
