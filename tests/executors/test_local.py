"""The local executor beyond the contract: signals, bad input, the plain live view."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from executor_harness import TIMEOUT, Repo


def test_sigterm_stops_every_task_aborted_and_a_new_run_resumes(repo: Repo) -> None:
    for task in ("a", "b"):
        repo.new(task)
        (repo.dir / f"hold-{task}-s2").write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "specd", "run", "--all", "--auto", "--agent", repo.agent()],
                            cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    while not all((repo.tree(t) / f"held-{t}-s2").exists() for t in ("a", "b")):
        assert time.monotonic() < deadline, "the held steps never started"
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, out + err
    assert out.count("ABORTED") >= 2
    for task in ("a", "b"):
        (repo.dir / f"hold-{task}-s2").unlink()
    done = repo.specd("run", "--all", "--auto", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    steps = [(t, s) for t, s, _, _ in repo.ledger()]
    assert sorted(steps) == sorted((t, s) for t in "ab" for s in repo.steps)


def test_an_unknown_task_or_a_cycle_is_bad_input(repo: Repo) -> None:
    unknown = repo.specd("run", "nope")
    assert unknown.returncode == 2
    assert "nope" in unknown.stderr
    repo.new("x", "y")
    repo.new("y", "x")
    cycle = repo.specd("run", "--all")
    assert cycle.returncode == 2
    assert "cycle" in cycle.stderr
    assert "Traceback" not in cycle.stderr


def test_neither_tasks_nor_all_is_a_usage_error(repo: Repo) -> None:
    done = repo.specd("run")
    assert done.returncode == 2
    assert "--all" in done.stderr


def test_piped_output_is_plain_lines_and_a_table(repo: Repo) -> None:
    repo.new("a")
    done = repo.specd("run", "a", "--auto", "--agent", repo.agent())
    assert done.returncode == 0
    assert "a: started in .specd/worktrees/a" in done.stdout
    assert "a: COMPLETE" in done.stdout
    assert "specd/a" in done.stdout
    assert "\x1b[" not in done.stdout


def test_a_need_finished_in_the_users_tree_has_no_branch_to_merge(repo: Repo) -> None:
    repo.new("base")
    finished = repo.specd("continue", "base", "--auto", "--agent", repo.agent())  # in the user's own tree
    assert finished.returncode == 0, finished.stderr
    repo.new("next", "base")
    done = repo.specd("run", "next", "--auto", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo.tree("next") / "out-next-s3.txt").exists()
    assert not repo.tree("base").exists()  # a COMPLETE need is not run again


def test_worktrees_stay_ignored_in_a_project_set_up_before_specd_run(repo: Repo) -> None:
    ignore = repo.root / ".specd" / ".gitignore"
    ignore.write_text(ignore.read_text().replace("worktrees/\n", ""))  # as `specd init` wrote it before
    repo.git("commit", "-q", "-am", "an older .specd/.gitignore")
    repo.new("a")
    before = repo.snapshot()
    done = repo.specd("run", "a", "--auto", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.snapshot() == before


def test_a_repository_without_a_commit_is_bad_input(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    project.mkdir()
    run = [sys.executable, "-m", "specd"]
    for argv in (["init"], ["new", "a"]):
        assert subprocess.run([*run, *argv], cwd=project, capture_output=True, check=False).returncode == 0
    outside = subprocess.run([*run, "run", "a"], cwd=project, capture_output=True, text=True, check=False)
    assert outside.returncode == 2
    assert "not in a git repository" in outside.stderr
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    empty = subprocess.run([*run, "run", "a"], cwd=project, capture_output=True, text=True, check=False)
    assert empty.returncode == 2
    assert "has no commit yet" in empty.stderr
    assert not (project / ".specd" / "worktrees" / "a").exists()


def test_one_task_with_a_cut_run_state_is_reported_and_the_others_run(repo: Repo) -> None:
    for task in "abcdef":
        repo.new(task)
    repo.new("g", "c")  # needs the broken one: it waits, and says for what
    state = repo.root / ".specd" / "tasks" / "c" / ".pipeline-state.json"
    state.write_text('{"run_id": "r1", "status": "IN_PROG', encoding="utf-8")  # cut in half by a crash
    done = repo.specd("run", "--all", "--auto", "--agent", repo.agent())
    assert done.returncode == 2, done.stdout + done.stderr  # bad input, named; but only after the rest ran
    assert "c: not run, its files do not load (the others run)" in done.stdout
    assert "fix: restore it from git" in done.stdout
    for task in "abdef":
        assert f"{task}: COMPLETE" in done.stdout, done.stdout
        assert ("s3", task) in [(step, t) for t, step, _, _ in repo.ledger()]  # its last step ran
    assert "g: not started, waits for c" in done.stdout
    assert state.read_text(encoding="utf-8") == '{"run_id": "r1", "status": "IN_PROG'  # left for its owner


def _status(repo: Repo, task: str) -> dict[str, object]:
    done = repo.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_a_pipeline_file_broken_after_an_answer_is_bad_input_and_the_task_stays_as_it_was(tmp_path: Path) -> None:
    repo = Repo(tmp_path, pause="s2")
    repo.new("m1")
    waits = repo.specd("continue", "m1", "--semi-auto", "--agent", repo.agent())  # in the user's tree: s1, a gate
    assert waits.returncode == 3, waits.stdout + waits.stderr
    assert repo.specd("approve", "m1").returncode == 0
    before = _status(repo, "m1")
    assert (before["status"], before["idle"]) == ("IN_PROGRESS", "answered")
    pipeline = repo.root / ".specd" / "pipeline.json"
    good = pipeline.read_text(encoding="utf-8")
    pipeline.write_text(good.replace('"name": "s2",', '"name": "s2"'), encoding="utf-8")  # a comma dropped

    done = repo.specd("run", "m1", "--agent", repo.agent())
    assert done.returncode == 2, done.stdout + done.stderr  # as `specd continue m1` exits: not 1, nothing failed
    line = "m1: IN_PROGRESS: not run, bad input (the task is as it was): "
    assert line in done.stdout, done.stdout
    said = done.stdout.split(line, 1)[1]
    assert said.startswith(f"{pipeline}:1:"), said
    assert "invalid JSON: Expecting ',' delimiter\n  fix: fix the syntax at that line" in said, said
    assert "FAILED" not in done.stdout
    assert _status(repo, "m1")["status"] == "IN_PROGRESS"
    as_json = repo.specd("run", "m1", "--json", "--agent", repo.agent())
    assert as_json.returncode == 2
    summary = [json.loads(row) for row in as_json.stdout.splitlines() if '"summary"' in row]
    assert [(s["status"], s["bad_input"], s["elsewhere"]) for s in summary] == [("IN_PROGRESS", True, False)]

    pipeline.write_text(good, encoding="utf-8")
    assert _status(repo, "m1") == before  # the saved state is as the answer left it
    ran = (repo.root / "ledger-m1.txt").read_text(encoding="utf-8").splitlines()  # the agent, in the user's tree
    assert [line.split()[:2] for line in ran] == [["m1", "s1"]]


def test_no_api_key_is_bad_input_the_task_is_not_started_and_what_needs_it_waits(repo: Repo) -> None:
    repo.new("d1")
    repo.new("d2", "d1")
    done = repo.specd("run", "--all")  # no --agent: the pipeline's own, Anthropic's, and no key in the environment
    assert done.returncode == 2, done.stdout + done.stderr
    assert ("d1: NOT_STARTED: not run, bad input (the task is as it was): the anthropic agent needs "
            "ANTHROPIC_API_KEY") in done.stdout, done.stdout
    assert "fix: export ANTHROPIC_API_KEY=" in done.stdout
    assert "d2: not started, waits for d1" in done.stdout
    assert "FAILED" not in done.stdout
    rows = {line.split()[1]: line.split()[3] for line in done.stdout.splitlines() if line.startswith("│ d")}
    assert rows == {"d1": "NOT_STARTED", "d2": "NOT_STARTED"}, done.stdout
    for task in ("d1", "d2"):
        assert _status(repo, task)["status"] == "NOT_STARTED"
