"""`specd demo`: the whole built-in pipeline on a sample project, as a newcomer runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from demo_helpers import base_env, git, snapshot, specd

TASK_DIR = Path(".specd/tasks/word-count")
Demo = tuple[Path, subprocess.CompletedProcess[str]]


def test_demo_exits_0_and_leaves_the_documents(demo_project: Demo) -> None:
    root, result = demo_project
    assert result.returncode == 0, result.stderr
    task = root / TASK_DIR
    for name in ("FEATURE.md", "CONTEXT.md", "DECISIONS.md", "RESEARCH.md", "ROADMAP.md", "STATE.md"):
        assert (task / name).is_file(), name
    for phase in ("01", "01.1", "02"):  # 01.1 is the fix phase the review asked for
        assert (task / "phases" / f"phase-{phase}" / "PLAN.md").is_file(), phase
    assert "### Phase 1" in (task / "ROADMAP.md").read_text(encoding="utf-8")
    assert "specd status word-count" in result.stdout


def test_demo_code_and_its_tests_pass(demo_project: Demo) -> None:
    root, _ = demo_project
    assert (root / "textstats" / "core.py").is_file()
    assert (root / "textstats" / "__main__.py").is_file()
    assert list((root / "tests").glob("test_*.py"))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                           env=base_env(), capture_output=True, text=True, timeout=120, check=False)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    counted = subprocess.run([sys.executable, "-m", "textstats"], cwd=root, input="one two  three\n",
                             env=base_env(), capture_output=True, text=True, timeout=60, check=False)
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == "3"


def test_demo_commits_per_step_and_leaves_nothing_behind(demo_project: Demo) -> None:
    root, _ = demo_project
    log = git("log", "--format=%s", cwd=root)
    assert "docs(word-count): starting discuss" in log
    assert "docs(word-count): discuss complete" in log
    assert "docs(word-count): review complete (phase 01)" in log
    assert "docs(word-count): revise complete (phase 01)" in log
    assert "docs(word-count): review complete (phase 02)" in log
    assert git("status", "--porcelain", cwd=root) == ""
    tracked = git("ls-files", cwd=root).splitlines()
    transient = [p for p in tracked if Path(p).name in (".run.lock", ".run.lock.owner", ".heartbeat")
                 or Path(p).name.startswith(".result-")]
    assert transient == []


def test_demo_status_is_complete(demo_project: Demo) -> None:
    root, _ = demo_project
    result = specd("status", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["tasks"]
    rows = rows if isinstance(rows, list) else [rows]
    (row,) = [r for r in rows if r["task"] == "word-count"]
    assert row["status"] == "COMPLETE"
    assert row["next"] is None
    one = specd("status", "word-count", "--json", cwd=root)
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["status"] == "COMPLETE"


def test_demo_task_config_records_stage_and_phase_starts(demo_project: Demo) -> None:
    root, _ = demo_project
    config = json.loads((root / TASK_DIR / "config.json").read_text(encoding="utf-8"))
    assert config["stage"] == "complete"
    starts = config["phase_start_commits"]
    assert "01" in starts
    # The recorded start commit is a real commit in the demo's history.
    assert git("cat-file", "-t", starts["01"], cwd=root).strip() == "commit"


def test_demo_semi_auto_stops_at_eof_then_continues(tmp_path: Path) -> None:
    stopped = specd("demo", "--semi-auto", "--dir", "my gated", cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    root = tmp_path / "my gated"
    assert f"cd '{root}' && specd continue word-count --semi-auto" in stopped.stdout  # as typed, space and all
    assert "Traceback" not in stopped.stderr
    waiting = json.loads(specd("status", "word-count", "--json", cwd=root).stdout)
    assert waiting["status"] == "WAITING_FOR_HUMAN"

    done = specd("continue", "word-count", "--semi-auto", cwd=root, stdin="proceed\n" * 60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(specd("status", "word-count", "--json", cwd=root).stdout)["status"] == "COMPLETE"
    assert git("status", "--porcelain", cwd=root) == ""


def test_demo_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    target = tmp_path / "X"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    (target / "sub").mkdir()
    (target / "sub" / "keep.py").write_text("x = 1\n", encoding="utf-8")
    before = snapshot(target)
    names_before = sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))

    result = specd("demo", "--dir", "X", cwd=tmp_path)

    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "not empty" in result.stderr
    assert snapshot(target) == before
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == names_before


def test_demo_commits_without_any_git_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = base_env({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"},
                   identity=False)
    env.pop("GIT_CONFIG_GLOBAL", None)
    env.pop("EMAIL", None)

    result = specd("demo", "--dir", "anon", cwd=tmp_path, env=env)

    assert result.returncode == 0, result.stdout + result.stderr
    root = tmp_path / "anon"
    authors = set(git("log", "--format=%an <%ae>", cwd=root, env=env).splitlines())
    assert "specd <specd@localhost>" in authors
    subjects = git("log", "--format=%s", cwd=root, env=env)
    assert "docs(word-count): starting discuss" in subjects
    assert git("status", "--porcelain", cwd=root, env=env) == ""
    assert "no git identity" in result.stderr


def test_demo_revise_runs_the_fix_phase_once_and_never_re_executes_phase_01(demo_project: Demo) -> None:
    root, result = demo_project
    assert result.returncode == 0, result.stderr
    shown = specd("status", "word-count", "--json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    steps = [(row["step"], row["phase"], row["outcome"]) for row in json.loads(shown.stdout)["history"]
             if row["kind"] == "step"]
    assert steps == [("discuss", None, "done"), ("research", None, "done"), ("plan", None, "done"),
                     ("plan", "01", "done"), ("execute", "01", "done"), ("review", "01", "revise"),
                     ("revise", "01", "done"),
                     # the fix phase revise wrote runs next, once, as a phase of its own
                     ("plan", "01.1", "done"), ("execute", "01.1", "done"), ("review", "01.1", "approve"),
                     ("plan", "02", "done"), ("execute", "02", "done"), ("review", "02", "approve")]
    log = git("log", "--format=%s", cwd=root).splitlines()
    assert log.count("docs(word-count): execute complete (phase 01)") == 1
    assert log.count("docs(word-count): execute complete (phase 01.1)") == 1
    # the fix phase's execute is what applied the fix: the demo's code counts a lone dash as no word
    counted = subprocess.run([sys.executable, "-m", "textstats"], cwd=root, input="wait - what ?\n",
                             env=base_env(), capture_output=True, text=True, timeout=60, check=False)
    assert counted.stdout.strip() == "2", counted.stderr
