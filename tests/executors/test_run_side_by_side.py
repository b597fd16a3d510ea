"""`specd run` beside another process running the same tasks: a second `specd run`, or a `specd continue`.

A task another process has is left to it (specd/executors/taken.py): never placed, reset or started here; the run
says so with that process's pid, waits for it, and counts the task as it ended there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from executor_harness import TIMEOUT, Repo, assert_clean_branches

from specd.executors.child import Child
from specd.executors.local import LocalExecutor
from specd.executors.results import Settings
from specd.state.lock import HELD
from specd.tasks.project import Project


def test_two_runs_of_every_task_started_at_once_share_them_and_both_exit_0(tmp_path: Path) -> None:
    """Whatever the interleaving: each task is started by one of the two runs, each step runs once, and both runs
    report every task COMPLETE (the other's with its pid) and exit 0.

    Run against the code before the fix (no task taken across processes, `worktree add` guarded only within one)
    it failed 11 times in 11 (with -j 6, then -j 2): a run exited 1, reporting tasks FAILED ("task 'a' is already
    being run by pid N") and once BLOCKED with git's own "fatal: ... already exists". By hand, the same two runs
    also died on a task folder the other had just copied (a traceback)."""
    repo = Repo(tmp_path)
    tasks = ["a", "b", "c", "d", "e", "f"]
    for task in tasks[:-1]:
        repo.new(task)
    repo.new("f", "a")  # waits for a, whichever run has a
    argv = [sys.executable, "-m", "specd", "run", "--all", "--auto", "-j", "2", "--json", "--agent", repo.agent()]
    env = {**repo.env, "AGENT_SLEEP": "0.3"}
    runs = [subprocess.Popen(argv, cwd=repo.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    done = [run.communicate(timeout=TIMEOUT) for run in runs]

    started: Counter[str] = Counter()
    for run, (out, err), other in zip(runs, done, reversed(runs), strict=True):
        assert run.returncode == 0, out + err
        assert "Traceback" not in err, err
        assert "fatal:" not in out + err, out + err
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        summary = {e["task"]: e for e in events if e["kind"] == "summary"}
        assert sorted(summary) == tasks, out
        mine = {e["task"] for e in events if e["kind"] == "task_started"}
        for task, row in summary.items():
            assert row["status"] == "COMPLETE", row
            assert row["elsewhere"] == (task not in mine), row
            assert row["run_by"] in (None, other.pid), row  # None: run here, or who ran it was not known
        started.update(mine)
    assert started == Counter(tasks), started  # no task was started by both runs
    ledger = Counter((task, step) for task, step, _, _ in repo.ledger())
    assert ledger == Counter((task, step) for task in tasks for step in repo.steps)  # each step once
    assert_clean_branches(repo, tasks[:-1])  # f has a merged in, and so a's commits
    assert repo.git("worktree", "list", "--porcelain").count("\nworktree ") == len(tasks)


def test_a_task_a_continue_holds_is_left_untouched_reported_with_its_pid_and_counted_as_it_ended(
        tmp_path: Path) -> None:
    """Deterministic: `specd continue t` is inside step s2 (its agent held) before `specd run t` starts."""
    repo = Repo(tmp_path, pause="s2")
    repo.new("t")
    first = repo.specd("run", "t", "--semi-auto", "--agent", repo.agent())  # s1 in its worktree, then the gate
    assert first.returncode == 3, first.stdout + first.stderr
    assert repo.specd("approve", "t").returncode == 0
    tree = repo.tree("t")
    (repo.dir / "hold-t-s2").write_text("")
    cont = subprocess.Popen([sys.executable, "-m", "specd", "continue", "t", "--auto", "--agent", repo.agent()],
                            cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    run: subprocess.Popen[str] | None = None
    try:
        _wait_for(lambda: (tree / "held-t-s2").exists(), cont)
        before = _tree_marks(repo, tree)
        run = subprocess.Popen([sys.executable, "-m", "specd", "run", "t", "--auto", "--agent", repo.agent()],
                               cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        assert run.stdout is not None
        seen = []
        for line in run.stdout:  # the old run ended at once, its child refused the lock: no hang here
            seen.append(line)
            if "runs in pid" in line:
                break
        assert seen, run.communicate()
        assert seen[-1].strip() == (f"t: runs in pid {cont.pid} (a specd continue, or an answer being saved); "
                                    "left to it; this run waits for it"), "".join(seen)
        assert run.poll() is None  # it waits for the continue
        assert _tree_marks(repo, tree) == before  # no reset, no merge, no copy, no child
    finally:
        (repo.dir / "hold-t-s2").unlink()
    out, err = cont.communicate(timeout=TIMEOUT)
    assert cont.returncode == 0, out + err
    rest, err = run.communicate(timeout=TIMEOUT)
    shown = "".join(seen) + rest
    assert run.returncode == 0, shown + err
    assert f"t: COMPLETE: run by pid {cont.pid} (a specd continue, or an answer being saved)" in shown
    assert "started in" not in shown, shown
    assert "FAILED" not in shown, shown
    assert Counter((task, step) for task, step, _, _ in repo.ledger()) == Counter(("t", s) for s in repo.steps)


def _tree_marks(repo: Repo, tree: Path) -> tuple[Any, ...]:
    """What touching the worktree would change: its HEAD and branch, its index file, its files' state, the home
    record (a run that starts the task's child names its pid there)."""
    index = Path(repo.git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=tree).strip())
    stat = index.stat()
    return (repo.git("rev-parse", "HEAD", "specd/t", cwd=tree), (stat.st_mtime_ns, stat.st_size, stat.st_ino),
            repo.git("--no-optional-locks", "status", "--porcelain", "--untracked-files=all", cwd=tree),
            (repo.root / ".specd" / "homes" / "t.json").read_text(encoding="utf-8"))


def _wait_for(ready: Any, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_nothing_of_a_taken_task_is_left_behind(tmp_path: Path) -> None:
    """The claim files live in .specd/homes/ (git-ignored): a run leaves the user's tree as it found it."""
    repo = Repo(tmp_path)
    repo.new("a")
    before = repo.snapshot()
    done = repo.specd("run", "a", "--auto", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.snapshot() == before
    assert (repo.root / ".specd" / "homes" / "a.lock").exists()
    assert not (repo.root / ".specd" / "homes" / "a.lock.owner").exists()  # let go: names no one
    assert (repo.root / ".specd" / "worktrees" / ".adding.lock").exists()  # ignored with the worktrees


def test_a_child_refused_the_lock_by_an_answer_already_over_is_looked_at_again_not_reported(repo: Repo) -> None:
    """The one moment `taken` cannot close: an answer (`specd approve`) takes the task's lock for a moment after the
    run looked and before its child took it. The child is refused; the run waits and looks again, as for any task
    another process has, and goes on with it once let go."""
    repo.new("t")
    events: list[tuple[str, dict[str, Any]]] = []
    executor = LocalExecutor(Project(repo.root), Settings(), lambda task, event: events.append((task, event)))
    gone = subprocess.Popen(["sh", "-c", "exit 2"], start_new_session=True)  # a real child's end (its group swept)
    gone.wait()
    lock = repo.root / ".specd" / "tasks" / "t" / ".run.lock"
    refused = {"ok": False, "task": "t", "error": {"code": 2, "fix": "wait for that run to finish",
                                                  "message": f"task 't' {HELD} pid 1 on x since y (lock: {lock})"}}
    with tempfile.TemporaryFile() as errors:
        child = Child("t", gone, errors, 0.0, envelope=refused)
        executor.running["t"] = child
        status = {"t": "IN_PROGRESS"}
        executor._finished(child, status)

    assert "t" in executor.elsewhere
    assert events[-1] == ("t", {"kind": "task_elsewhere", "pid": None, "reason": "runs in another process (a specd "
                                "continue, or an answer being saved); left to it"})
    assert "t" not in executor.results or not executor.results["t"].bad_input
    assert executor._let_go(status) == ["t"]  # no one has it now, and it never started: it goes on in this run
    assert "t" not in executor.elsewhere
    assert status["t"] == "NOT_STARTED"
    assert events[-1][1]["message"].endswith("let it go (NOT_STARTED): it goes on in this run"), events
