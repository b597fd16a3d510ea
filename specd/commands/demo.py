"""`specd demo`."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import click

from specd.commands.continue_ import mode_options
from specd.commands.envelope import emit, error_body, json_option
from specd.events import EventBus
from specd.human import Human
from specd.tasks.phases import sort_key


@click.command()
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=Path("specd-demo"),
              show_default=True, help="Where to create the sample project (must be new or empty).")
@mode_options("auto", "the demo's default")
@click.option("--quiet", "-q", is_flag=True, help="Only the final summary.")
@json_option()
def demo(folder: Path, mode: str | None, quiet: bool, as_json: bool) -> int:
    """Watch specd run the whole built-in pipeline on a sample project, with the
    built-in scripted agent playing the LLM: no API key, done in seconds.

    It creates a small Python project (a git repo) and a task, `word-count`,
    then runs discuss, research, plan, and plan/execute/review/revise for each
    phase, including one review that asks for a fix. Default mode: --auto.
    """
    from specd.commands.terminal.human import StreamHuman
    from specd.commands.terminal.live import LiveView
    from specd.demo import TASK, create_demo_project
    from specd.engine.seam import run_task

    project = create_demo_project(folder)
    click.echo(f"sample project: {project.root}  (task {TASK})", err=True)

    def human_for(_: str) -> Human:
        return StreamHuman()

    stopped = run_task(project, TASK, mode_flag=mode or "auto", agent_spec=None, human_for=human_for,
                       events=EventBus(LiveView(quiet=quiet or as_json)))
    code = stopped.exit_code
    if as_json:
        hint = f"cd {shlex.quote(str(project.root))} && specd continue {TASK} --{mode or 'auto'}"
        emit(TASK, project=str(project.root), status=stopped.status,
             error=error_body(code, stopped.reason or stopped.status, hint) if code else None)
        return code
    _summary(project.root, TASK, code, mode or "auto")
    return code


def _summary(root: Path, task: str, code: int, mode: str) -> None:
    task_dir = root / ".specd" / "tasks" / task
    say = click.echo
    if code != 0:
        say(f"\nThe demo is waiting for you. Continue it with:\n  cd {shlex.quote(str(root))} && "
            f"specd continue {task} --{mode}")
        return
    plans = [p.relative_to(task_dir).as_posix()
             for p in sorted(task_dir.glob("phases/*/PLAN.md"), key=lambda p: sort_key(p.parent.name[6:]))]
    commits = subprocess.run(["git", "log", "--oneline"], cwd=root, capture_output=True, text=True, check=False)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=root, capture_output=True, text=True,
                           check=False)
    last = (tests.stdout.strip().splitlines() or ["(pytest printed nothing)"])[-1]
    if "No module named pytest" in tests.stderr:
        last = "not run (pytest is not installed; `pip install pytest`, then `python -m pytest` there)"
    say(f"\nDone. What happened, and where to look (in {root}):")
    say(f"  task documents:  .specd/tasks/{task}/ (FEATURE, CONTEXT, DECISIONS, RESEARCH, ROADMAP, STATE)")
    say(f"  phase plans:     {', '.join(plans)}")
    say("  code and tests:  textstats/, tests/   pytest: " + last)
    say(f"  git history:     {len(commits.stdout.splitlines())} commits (git log --oneline)")
    say(f"  run record:      .specd/tasks/{task}/.pipeline-state.md and events.jsonl")
    say(f"Try: cd {shlex.quote(str(root))} && specd status {task}")
