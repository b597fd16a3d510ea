"""specdacular's own pipeline.json, its `@~/.claude/specdacular/…` includes, and its commit messages."""

from __future__ import annotations

import json
import subprocess

from spd_kit import Project, roadmap

from specd.resources import builtin


def _steps(names: list[tuple[str, str]], pause: bool = False) -> list[dict[str, object]]:
    return [{"name": n, "workflow": w, **({"pause": True} if pause and n != "plan" else {}),
             "hooks": {"pre": None, "post": None}} for n, w in names]


# As specdacular ships it: schema 1.0, `pause`, and a phase-execution reference without foreach.
SPECDACULAR_PIPELINE = {
    "schema_version": "1.0",
    "pipelines": {
        "main": [*_steps([("discuss", "discuss.md"), ("research", "research.md"), ("plan", "plan.md")]),
                 {"name": "phase-execution", "pipeline": "phase-execution"}],
        "phase-execution": _steps([("plan", "phase-plan.md"), ("execute", "execute.md"), ("review", "review.md"),
                                   ("revise", "revise.md")], pause=True),
    },
    "hooks": {"pre-step": None, "post-step": None},
}


def write_pipeline(sp: Project, data: object) -> None:
    (sp.root / ".specd/pipeline.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_specdacular_pipeline_validates_with_a_notice_about_the_phase_loop(sp: Project) -> None:
    write_pipeline(sp, SPECDACULAR_PIPELINE)
    result = sp.specd("pipeline", "validate")
    assert result.returncode == 0, result.stderr
    assert "ok:" in result.stdout
    assert "pipelines.main[3]" in result.stderr
    assert "once per phase" in result.stderr
    assert "execute, review, revise route outcomes" in result.stderr
    shown = json.loads(sp.specd("pipeline", "show", "--json").stdout)
    assert "phases" in json.dumps(shown)
    explicit = json.loads(json.dumps(SPECDACULAR_PIPELINE))
    explicit["pipelines"]["main"][3]["foreach"] = "phases"
    write_pipeline(sp, explicit)
    result = sp.specd("pipeline", "validate")
    assert result.returncode == 0, result.stderr
    assert "once per phase" not in result.stderr


def test_specdacular_pipeline_loops_per_phase_skipping_done_ones(sp: Project) -> None:
    write_pipeline(sp, SPECDACULAR_PIPELINE)
    sp.task("t", {"stage": "planning"}, research=True,
            roadmap_text=roadmap("t", [("1", "A", True), ("2", "B", False), ("3", "C", False)], marker="status"))
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    assert sp.log() == ["phase-execution plan 02", "phase-execution execute 02", "phase-execution review 02",
                        "phase-execution plan 03", "phase-execution execute 03", "phase-execution review 03"]


def test_a_fresh_run_entering_the_phase_loop_skips_phases_the_roadmap_marks_done(sp: Project) -> None:
    # main is only the loop: the run enters it from the top and asks for the first phase itself.
    write_pipeline(sp, {"schema_version": "1.0", "pipelines": {
        "main": [{"name": "phase-execution", "pipeline": "phase-execution"}],
        "phase-execution": _steps([("execute", "execute.md")])}})
    sp.task("t", {"stage": "discussion"}, gray=[False],
            roadmap_text=roadmap("t", [("1", "A", True), ("2", "B", False), ("3", "C", True), ("4", "D", False)]))
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    assert sp.log() == ["phase-execution execute 02", "phase-execution execute 04"]


def test_includes_resolve_to_builtin_workflows_and_templates(sp: Project) -> None:
    workflows = sp.root / ".specd/workflows"
    workflows.mkdir()
    (workflows / "my-execute.md").write_text(
        "---\ndescription: execute, specdacular style\n---\n<purpose>Build it.</purpose>\n\n<execution_context>\n"
        "@~/.claude/specdacular/workflows/execute.md\n</execution_context>\n\n"
        "  @./.claude/specdacular/templates/tasks/PLAN.md (the plan format)\n\n"
        "Use template at `~/.claude/specdacular/templates/tasks/DECISIONS.md` when recording.\n", encoding="utf-8")
    write_pipeline(sp, {"schema_version": "1.0", "pipelines": {"main": [{"name": "execute",
                                                                          "workflow": "my-execute.md"}]}})
    assert sp.specd("pipeline", "validate").returncode == 0
    sp.task("t", {"stage": "discussion"}, gray=[False])
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    prompt = sp.prompt(1)
    execute_body = builtin("workflows", "execute.md").read_text(encoding="utf-8").split("---\n", 2)[2].strip()
    assert execute_body in prompt
    assert builtin("templates", "PLAN.md").read_text(encoding="utf-8").strip() in prompt
    assert "@~/.claude/specdacular/workflows/execute.md" not in prompt.replace("<!-- @~", "")
    assert "`~/.claude/specdacular/templates/tasks/DECISIONS.md`" in prompt  # a mention, not an include


def test_an_include_with_no_builtin_equivalent_fails_naming_it(sp: Project) -> None:
    workflows = sp.root / ".specd/workflows"
    workflows.mkdir()
    path = workflows / "review.md"
    path.write_text("<step name=\"validate\">\n@~/.claude/specdacular/references/validate-task.md\n</step>\n"
                    "@./.claude/specdacular/workflows/no-such-flow.md\n", encoding="utf-8")
    result = sp.specd("pipeline", "validate")
    assert result.returncode == 2
    assert f"{path}: line 2: include @~/.claude/specdacular/references/validate-task.md" in result.stderr
    assert f"{path}: line 4: include @./.claude/specdacular/workflows/no-such-flow.md" in result.stderr
    assert "fix:" in result.stderr
    assert "Traceback" not in result.stderr


def test_commit_messages_match_specdacular(sp: Project) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=sp.root, capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "T")
    sp.task("t", {"stage": "execution", "phases": {"total": 1, "current": 1, "current_status": "executed"}},
            roadmap_text=roadmap("t", [("1", "A", False)]), plans={"01": ["PLAN.md"]})
    git("add", ".")
    git("commit", "-qm", "specdacular history")
    result = sp.cont("t")
    assert result.returncode == 0, result.stderr
    subjects = git("log", "--format=%s").splitlines()[::-1]
    assert subjects[:3] == ["specdacular history", "docs(t): starting review", "docs(t): review complete (phase 01)"]
