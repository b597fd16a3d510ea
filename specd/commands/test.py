"""`specd test`: run a pipeline's test cases, or record one from a task's run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from specd.commands.common import project_from
from specd.commands.envelope import emit, error_body, json_option
from specd.commands.examples import epilog
from specd.errors import EXIT_FAILED, EXIT_OK, UsageError

EXAMPLE = """\b
Example .specd/tests/review.yaml:
  schema_version: "1.0"
  cases:
    - name: review sends phase 01 to revise
      files: {ROADMAP.md: "### Phase 1: Parser\\n"}
      steps:                      # what the fake agent returns, in order
        - {step: review, phase: "01", outcome: revise}
      expect:                     # a step not listed above reports done
        path: [discuss, research, plan, plan@01, execute@01,
               "review@01: revise", revise@01]
        status: COMPLETE          # or WAITING_FOR_HUMAN (with waiting:), BLOCKED, FAILED

  A reply may also give `output:` (a typed output), `files:` (written in
  the task folder) or `fail:`. `answers: [approve, "reject: note", skip]`
  answers the run's holds in order (`expect.holds:` names them).
"""


@click.command(epilog=f"{epilog('test')}\n\n{EXAMPLE}")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--record", "record", metavar="TASK", help="Write .specd/tests/TASK.yaml from TASK's run.")
@click.option("--force", is_flag=True, help="With --record: replace an existing test file.")
@click.option("--builtin", is_flag=True, help="Run the built-in pipeline's own tests, in an empty project.")
@json_option()
@click.pass_context
def test(ctx: click.Context, files: tuple[Path, ...], record: str | None, force: bool, builtin: bool,
         as_json: bool) -> int:
    """Test the pipeline without tokens: each case in FILES (default: every
    .specd/tests/*.yaml, and the built-in pipeline's tests while the project
    uses it) runs through the real loop in a scratch copy of the project,
    with a scripted agent that returns what the case says (outcome, output,
    files; a step the case does not list reports done). The steps the run
    takes (with phases and outcomes) and how it ends must match the case.
    Your tree and tasks are never touched.

    Exit codes: 0 every case passed, 1 a case failed (the first step where
    the run differs is named), 2 a bad test or pipeline file.
    """
    from specd.pipeline import load_pipeline
    from specd.tasks.project import Project
    from specd.testing.cases import builtin_tests, check_steps, load_cases, test_files
    from specd.testing.run import run_case

    project = project_from(ctx)
    if record:
        from specd.testing.record import write_case

        target = write_case(project, record, force=force)
        if as_json:
            emit(record, written=str(target))
        else:
            click.echo(f"wrote {project.rel(target)}; `specd test {project.rel(target)}` replays it")
        return EXIT_OK
    with tempfile.TemporaryDirectory(prefix="specd-test-empty-") as empty:
        if builtin:
            project, paths = Project(Path(empty)), list(files) or builtin_tests()
        else:
            paths = list(files) or test_files(project.specd_dir / "tests")
            if not files and load_pipeline(project).builtin:
                paths += builtin_tests()
        config = load_pipeline(project)  # a broken pipeline is bad input before any case runs
        if not paths:
            raise UsageError(f"no tests: {project.specd_dir / 'tests'} holds no .yaml files",
                             fix="write one (see `specd test --help`), or `specd test --record TASK` from a run")
        cases = [case for path in paths for case in load_cases(path)]  # every file checked before any runs
        check_steps(cases, {s.name for steps in config.pipelines.values() for step in steps
                            for s in (step, *step.members)})  # a parallel group's members get replies too
        verdicts = [run_case(project, case) for case in cases]
    failed = [v for v in verdicts if not v.passed]
    if as_json:
        error = error_body(EXIT_FAILED, f"{len(failed)} of {len(verdicts)} cases failed",
                           "see each case's failure") if failed else None
        emit(None, error=error, cases=[v.as_dict() for v in verdicts], passed=len(verdicts) - len(failed),
             failed=len(failed))
        return EXIT_FAILED if failed else EXIT_OK
    for verdict in verdicts:
        where = f"{verdict.case.source.name}: {verdict.case.name}"
        if verdict.passed:
            click.echo(f"PASS  {where} ({len(verdict.actual)} steps, {verdict.status})")
            continue
        click.echo(f"FAIL  {where}\n      {verdict.failure}")
        click.echo("      expected: " + " → ".join(p.shown() for p in verdict.case.path))
        click.echo("      actual:   " + (" → ".join(p.shown() for p in verdict.actual) or "(no step ran)"))
    click.echo(f"{len(verdicts)} cases: {len(verdicts) - len(failed)} passed, {len(failed)} failed")
    return EXIT_FAILED if failed else EXIT_OK
