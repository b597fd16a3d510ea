"""Issue 17, part 4: runs of different tasks in one working tree take turns step by step, so each step
commit holds only its own step's work; specd's own redirected output is never committed."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

from git_harness import GitProject

STEPS = ("discuss", "research", "plan", "execute")
DEADLINE = 120.0  # generous: only a hang runs into it


def test_eight_hand_typed_runs_in_one_tree_commit_each_step_alone(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=STEPS)
    # the agent names no files: which run made a file is told by the turns alone, not by a report
    gp.rules({"*": {"write": {"out-{task}-{step}.txt": "{task} {step}\n"}}})
    tasks = [f"p{n}" for n in range(8)]
    for task in tasks:
        gp.new(task)

    procs = {task: gp.start(task) for task in tasks}  # eight concurrent `specd continue` processes
    outputs = {task: proc.communicate(timeout=300) for task, proc in procs.items()}

    for task, (out, err) in outputs.items():
        assert procs[task].returncode == 0, f"{task}:\n{out}\n{err}"
        assert "warning" not in (out + err).lower(), f"{task}:\n{out}\n{err}"
    commits = gp.commits()
    for task in tasks:
        done = {subject: files for subject, files in commits if subject.startswith(f"docs({task}): ")
                and subject.endswith(" complete")}
        assert sorted(done) == sorted(f"docs({task}): {step} complete" for step in STEPS)
        for step in STEPS:
            files = done[f"docs({task}): {step} complete"]
            assert [f for f in files if not f.startswith(f".specd/tasks/{task}/")] == [f"out-{task}-{step}.txt"]
    for subject, files in commits:  # no commit of any kind holds another task's files
        task = subject.split("(", 1)[1].split(")", 1)[0]
        assert all(f.startswith((f".specd/tasks/{task}/", f"out-{task}-")) for f in files), (subject, files)
    assert gp.git("status", "--porcelain") == ""


def test_the_second_run_waits_naming_the_task_and_pid_that_hold_the_tree(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=("discuss",))
    gp.rules({"a:discuss": {"write": {"out-a.txt": "a\n"}, "hold": True},
              "*": {"write": {"out-{task}.txt": "{task}\n"}}})
    gp.new("a")
    gp.new("b")
    first = gp.start("a")
    _wait_for(lambda: (gp.dir / "held").exists(), first)  # a's step holds the tree now

    log = tmp_path / "b-out.txt"
    with log.open("w") as sink:
        second = subprocess.Popen(gp.argv("continue", "b", "--auto", "--agent", gp.agent_spec()), cwd=gp.root,
                                  stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                  env=gp.env)
    try:
        _wait_for(lambda: "waiting for the working tree" in log.read_text(), second)
        text = log.read_text()
        assert f"task 'a' (pid {first.pid})" in text
        assert not (gp.root / "out-b.txt").exists()  # b's step has not begun
    finally:
        os.kill(first.pid, signal.SIGKILL)  # the test kills specd: a jailed agent cannot see its pid
        first.communicate(timeout=DEADLINE)
    assert second.wait(timeout=DEADLINE) == 0, log.read_text()
    assert log.read_text().count("waiting for the working tree") == 1  # said once
    subjects = {subject: files for subject, files in gp.commits()}
    assert [f for f in subjects["docs(b): discuss complete"] if not f.startswith(".specd/")] == ["out-b.txt"]


def test_redirected_output_inside_the_repository_is_never_committed(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=("discuss", "plan"))
    gp.rules({"*": {"write": {"out-{task}-{step}.txt": "{task} {step}\n"}}})
    gp.new("t")
    argv = " ".join(shlex.quote(a) for a in gp.argv("continue", "t", "--auto", "--agent", gp.agent_spec()))
    result = subprocess.run(f"{argv} >out.txt 2>err.txt", shell=True, cwd=gp.root, env=gp.env, check=False,
                            stdin=subprocess.DEVNULL, timeout=DEADLINE)
    assert result.returncode == 0, (gp.root / "out.txt").read_text() + (gp.root / "err.txt").read_text()
    assert "discuss" in (gp.root / "err.txt").read_text()  # specd wrote there while its steps ran
    committed = {f for _, files in gp.commits() for f in files}
    assert {"out-t-discuss.txt", "out-t-plan.txt"} <= committed
    assert not committed & {"out.txt", "err.txt"}
    assert gp.git("status", "--porcelain", "--untracked-files=all").split() == ["??", "err.txt", "??", "out.txt"]


def _wait_for(ready: object, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not ready():  # type: ignore[operator]
        assert proc.poll() is None, f"specd exited early with {proc.returncode}"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)
