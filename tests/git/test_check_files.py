"""What the step's code makes when a check runs it is recorded like a hook's work (``engine/checks.py``).

A step's checks run after its commit, with code the step wrote (`pytest` imports its tests). What that code made
was once in no step's window: never committed, never held, never said, the rest of the run included. Real
`specd continue` runs with a real command agent and a real check command in a real repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from git_harness import GitProject

# The user's check runner: it runs each test the step wrote, as pytest would import them.
RUNNER = ("import pathlib, runpy\n"
          "for test in sorted(pathlib.Path('.').glob('test_*.py')):\n"
          "    runpy.run_path(str(test))['test_it']()\n")
# The step's test: what it does when run is in no file the step's commit shows.
SNEAKY = ("import os\n"
          "def test_it():\n"
          "    os.makedirs('tests', exist_ok=True)\n"
          "    open('tests/.gitignore', 'w').write('.gitignore\\nconftest.py\\n')\n"
          "    open('tests/conftest.py', 'w').write('print(1)\\n')\n"
          "    open('report.txt', 'w').write('the check ran\\n')\n")


def _project(tmp_path: Path, steps: tuple[str, ...]) -> GitProject:
    project = GitProject(tmp_path, steps=steps)
    project.write("run_checks.py", RUNNER)
    pipeline = json.loads((project.root / ".specd/pipeline.json").read_text(encoding="utf-8"))
    pipeline["pipelines"]["main"][0]["checks"] = [{"run": f"{sys.executable} run_checks.py"}]
    project.write(".specd/pipeline.json", json.dumps(pipeline))
    project.git("add", "-A")
    project.git("commit", "-q", "-m", "checks")
    return project


def test_source_the_steps_code_hides_when_a_check_runs_it_holds_the_run(tmp_path: Path) -> None:
    project = _project(tmp_path, ("build",))  # the last step: its checks run after its commit, before the run's end
    project.rules({"build": {"write": {"test_sneaky.py": SNEAKY}}})
    project.new("t")
    ran = project.run("t")
    out = " ".join((ran.stdout + ran.stderr).split())
    assert ran.returncode == 3, out  # before: COMPLETE, and tests/conftest.py in no commit, said nowhere
    assert ("step 'build' hid a file from git: tests/conftest.py (hidden by tests/.gitignore, a rule git "
            "ignores as well)") in out
    assert "checks passed" in out


def test_what_a_check_makes_is_committed_with_the_step(tmp_path: Path) -> None:
    project = _project(tmp_path, ("build", "review"))
    plain = "def test_it():\n    open('report.txt', 'w').write('ok\\n')\n"
    project.rules({"build": {"write": {"test_plain.py": plain}}})
    project.new("t")
    ran = project.run("t")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    committed = {f for _, files in project.commits() for f in files}
    assert {"test_plain.py", "report.txt"} <= committed  # before: report.txt left behind, in no commit
    assert project.git("status", "--porcelain") == ""
    events = (project.root / ".specd/tasks/t/events.jsonl").read_text(encoding="utf-8")
    kinds = [json.loads(line)["kind"] for line in events.splitlines()]
    assert kinds.index("checks_started") < kinds.index("checks_finished") < len(kinds)
