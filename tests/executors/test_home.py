"""One home per task: whichever verb starts a task, the others find its one copy (DESIGN.md "Many tasks").

Through the real CLI: `specd continue` then `specd run` keeps the task in the main tree; `specd run` then
`specd continue` keeps it in its worktree; an answer from the main tree reaches the copy that runs; with the
control plane (`specd ui`) running, an answer on its page is used by the one copy, whatever the order.
"""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from executor_harness import Repo

DEADLINE = 120.0


def _flags(repo: Repo) -> tuple[str, ...]:
    return ("--semi-auto", "--agent", repo.agent())


def _status(repo: Repo, task: str) -> dict[str, Any]:
    done = repo.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _home(repo: Repo, task: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.root / ".specd" / "homes" / f"{task}.json").read_text())
    return data


def _states(repo: Repo, task: str) -> list[Path]:
    """Every run state of ``task`` anywhere under the project: the main tree's and any worktree's."""
    return sorted(repo.root.rglob(f".specd/tasks/{task}/.pipeline-state.json"))


def _steps(repo: Repo, task: str) -> list[str]:
    return [row["step"] for row in _status(repo, task)["history"] if not row.get("superseded")]


def _ledger(tree: Path, task: str) -> list[str]:
    path = tree / f"ledger-{task}.txt"
    return [line.split()[1] for line in path.read_text().splitlines()] if path.exists() else []


def _summary(out: str, task: str) -> dict[str, Any]:
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    found: dict[str, Any] = next(r for r in rows if r.get("kind") == "summary" and r["task"] == task)
    return found


def test_a_task_continued_in_the_main_tree_goes_on_there_under_specd_run(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("a")
    first = repo.specd("continue", "a", *_flags(repo))
    assert first.returncode == 3, first.stderr  # s1 ran; the gate before s2 waits
    assert _home(repo, "a")["kind"] == "main"
    assert _home(repo, "a")["pid"] is None  # no process runs it now

    held = repo.specd("run", "--all", "--json", *_flags(repo))
    assert held.returncode == 3, held.stderr
    assert "lives in the main tree" in held.stdout
    assert not (repo.root / ".specd" / "worktrees" / "a").exists()
    assert _status(repo, "a")["status"] == _summary(held.stdout, "a")["status"] == "WAITING_FOR_HUMAN"

    answered = repo.specd("approve", "a", "--note", "go on")
    assert answered.returncode == 0, answered.stderr
    done = repo.specd("run", "--all", "--json", *_flags(repo))
    assert done.returncode == 0, done.stderr + done.stdout
    assert _status(repo, "a")["status"] == _summary(done.stdout, "a")["status"] == "COMPLETE"

    assert not (repo.root / ".specd" / "worktrees" / "a").exists()  # never copied
    assert "specd/a" not in repo.git("branch", "--list")
    assert _states(repo, "a") == [repo.root / ".specd" / "tasks" / "a" / ".pipeline-state.json"]
    assert _steps(repo, "a") == ["s1", "s2"]  # one history, each step once
    assert _ledger(repo.root, "a") == ["s1", "s2"]
    assert _status(repo, "a")["checkpoints"][-1]["note"] == "go on"  # the answer the run went on with


def test_a_task_run_in_its_worktree_is_continued_and_answered_there(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("b")
    started = repo.specd("run", "b", "--json", *_flags(repo))
    assert started.returncode == 3, started.stderr
    home = _home(repo, "b")
    assert (home["kind"], home["path"], home["branch"]) == ("worktree", ".specd/worktrees/b", "specd/b")
    tree = repo.tree("b")

    assert "changed in this tree" not in repo.specd("continue", "b", *_flags(repo)).stderr
    # Found by hand: a person edits the main tree's copy, which the task no longer reads, and is told where to.
    (repo.root / ".specd" / "tasks" / "b" / "ROADMAP.md").write_text("### Phase 1: One\n", encoding="utf-8")
    again = repo.specd("continue", "b", *_flags(repo))
    assert again.returncode == 3, again.stderr  # the worktree's copy still waits at its gate: nothing ran
    assert "lives in its worktree .specd/worktrees/b" in again.stderr
    assert (".specd/tasks/b/ROADMAP.md changed in this tree, but b reads its files in its worktree: make the "
            "change in .specd/worktrees/b/.specd/tasks/b/ instead") in again.stderr, again.stderr
    (repo.root / ".specd" / "tasks" / "b" / "ROADMAP.md").unlink()
    assert _status(repo, "b")["status"] == "WAITING_FOR_HUMAN"

    answered = repo.specd("approve", "b", "--note", "ship it")  # typed in the main tree
    assert answered.returncode == 0, answered.stderr
    done = repo.specd("continue", "b", *_flags(repo))
    assert done.returncode == 0, done.stderr
    assert _status(repo, "b")["status"] == "COMPLETE"

    states = _states(repo, "b")
    assert states == [tree / ".specd" / "tasks" / "b" / ".pipeline-state.json"]  # the main tree never ran it
    assert _steps(repo, "b") == ["s1", "s2"]
    assert _ledger(tree, "b") == ["s1", "s2"]
    assert _ledger(repo.root, "b") == []
    assert _status(repo, "b")["checkpoints"][-1]["note"] == "ship it"
    assert _home(repo, "b")["pid"] is None


def test_a_task_found_in_both_places_is_refused_naming_both(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("c")
    assert repo.specd("continue", "c", *_flags(repo)).returncode == 3
    # As before homes were recorded: a worktree made for the task while the main tree's run went on.
    (repo.root / ".specd" / "homes" / "c.json").unlink()
    repo.git("worktree", "add", "-q", "-b", "specd/c", ".specd/worktrees/c", "HEAD")
    # the step commit put the task folder in HEAD, so the worktree holds its copy already; make sure of it
    shutil.copytree(repo.root / ".specd" / "tasks" / "c", repo.tree("c") / ".specd" / "tasks" / "c",
                    dirs_exist_ok=True)

    for argv in (("approve", "c"), ("continue", "c", *_flags(repo)), ("run", "c", *_flags(repo))):
        refused = repo.specd(*argv)
        assert refused.returncode == 2, (argv, refused.stdout, refused.stderr)
        said = refused.stderr + refused.stdout
        assert ".specd/tasks/c/.pipeline-state.json" in said, said
        assert ".specd/worktrees/c" in said
        assert "git worktree remove --force .specd/worktrees/c" in said
        assert "Traceback" not in said
    listing = repo.specd("status", "--json")
    row = next(r for r in json.loads(listing.stdout)["tasks"] if r["task"] == "c")
    assert row["status"] == "ERROR"
    assert "exists twice" in row["reason"]
    assert not (repo.root / ".specd" / "homes" / "c.json").exists()  # nothing was picked


def test_a_task_homed_on_temporal_is_not_run_here_as_a_second_copy(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("t")
    record = {"kind": "temporal", "address": "127.0.0.1:7233", "workflow_id": "specd-abc-t"}
    repo.write(".specd/homes/t.json", json.dumps(record))  # as `specd run --executor temporal` leaves it
    for argv, code in ((("continue", "t", *_flags(repo)), 2), (("run", "t", *_flags(repo)), 2)):
        refused = repo.specd(*argv)
        said = refused.stderr + refused.stdout
        assert refused.returncode == code, (argv, said)
        assert "runs on Temporal (workflow specd-abc-t at 127.0.0.1:7233" in said, said
        assert "Traceback" not in said
    assert _states(repo, "t") == []  # nothing ran anywhere
    assert _home(repo, "t")["kind"] == "temporal"


def test_a_task_submitted_from_this_clone_whose_home_record_was_deleted_is_not_started_again_here(
        tmp_path: Path) -> None:
    """This clone submitted the task to Temporal (its record of submissions says so) and nothing of it ran here; its
    home record was deleted since (as an older fix said, or by hand). Its history is on the branch its workers push:
    `continue` and `run` refuse it, naming the command that brings it here, and never start it from its first step."""
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("t")
    sent = {"address": "127.0.0.1:7233", "namespace": "default", "task_queue": "specd", "remote": "origin",
            "workflow_id": "specd-abc-t"}
    (repo.root / ".git" / "specd-temporal.json").write_text(json.dumps({"t": sent}))
    for argv in (("continue", "t", *_flags(repo)), ("run", "t", *_flags(repo))):
        refused = repo.specd(*argv)
        said = refused.stderr + refused.stdout
        assert refused.returncode == 2, (argv, said)
        assert "runs on Temporal (workflow specd-abc-t at 127.0.0.1:7233" in said, said
        assert "`specd run t --move`" in said
        assert "Traceback" not in said
    assert _states(repo, "t") == []  # nothing ran anywhere
    assert _ledger(repo.root, "t") == []
    assert _home(repo, "t")["kind"] == "temporal"  # the record says again where it lives


def test_retry_and_rerun_of_a_task_on_temporal_change_nothing_here(tmp_path: Path) -> None:
    """`rerun` and `retry` change a run before they run it: for a task on Temporal they are refused first, so no
    run state is written here (a second copy, which a later verb would find)."""
    repo = Repo(tmp_path, steps=("s1", "s2"))
    repo.new("t")
    record = {"kind": "temporal", "address": "127.0.0.1:7233", "workflow_id": "specd-abc-t"}
    repo.write(".specd/homes/t.json", json.dumps(record))
    for argv in (("rerun", "t", "--from", "s2", "--auto", "--agent", repo.agent()),
                 ("retry", "t", "--auto", "--agent", repo.agent())):
        refused = repo.specd(*argv)
        said = refused.stderr + refused.stdout
        assert refused.returncode == 2, (argv, said)
        assert "runs on Temporal (workflow specd-abc-t" in said, said
        assert "`specd run t --move`" in said
        assert "starts again" not in said  # nothing was changed before the refusal
    assert _states(repo, "t") == []


def test_a_task_on_temporal_is_left_to_its_workers_by_run_all_and_never_takes_another_tasks_turn(
        tmp_path: Path) -> None:
    """`specd run --all` leaves a task that lives on Temporal to its workers (said, not BROKEN, not exit 2); named,
    it is refused, and the slot it was given goes to the next task at once: with -j 1, a run that placed the
    Temporal task first used to end with the other never started ("the run's --max-cost is spent")."""
    repo = Repo(tmp_path, steps=("s1",))
    repo.new("a")
    repo.new("b")
    record = {"kind": "temporal", "address": "127.0.0.1:7233", "workflow_id": "specd-abc-a"}
    repo.write(".specd/homes/a.json", json.dumps(record))
    named = repo.specd("run", "a", "b", "-j", "1", "--auto", "--agent", repo.agent())
    said = named.stdout + named.stderr
    assert named.returncode == 2, said  # a named task on Temporal is bad input here
    assert "a: not run here (the others run): task 'a' runs on Temporal" in said
    assert _status(repo, "b")["status"] == "COMPLETE", said
    assert "BROKEN" not in said  # its files load: it is left as it is, and its row says where it lives
    row = next(line for line in named.stdout.splitlines() if line.replace("│", " ").split()[:1] == ["a"])
    assert "NOT_STARTED" in row, said
    assert "(on Temporal)" in row, said
    assert "specd/a" not in row, said
    as_json = repo.specd("run", "a", "--json", "--auto", "--agent", repo.agent())
    summary = [json.loads(line) for line in as_json.stdout.splitlines() if '"summary"' in line]
    assert as_json.returncode == 2, as_json.stdout + as_json.stderr
    assert [(s["status"], s["bad_input"], s["home"], s["branch"]) for s in summary] == [
        ("NOT_STARTED", True, "temporal", None)]
    repo.new("c")
    every = repo.specd("run", "--all", "-j", "1", "--auto", "--agent", repo.agent())
    said = every.stdout + every.stderr
    assert every.returncode == 0, said
    assert "a: runs on Temporal: its workers run it, not this run" in said
    assert _status(repo, "c")["status"] == "COMPLETE", said
    assert _states(repo, "a") == []  # nothing ran anywhere


def test_a_task_moved_here_from_temporal_is_answered_here_even_with_temporal_down(tmp_path: Path) -> None:
    """This clone once submitted the task to Temporal (its record names it, at an address nothing serves now);
    the task was moved here since (its home is the main tree). An answer goes to this copy, as `status` reads
    it, and never tries the Temporal server first."""
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("t")
    waits = repo.specd("continue", "t", *_flags(repo))
    assert waits.returncode == 3, waits.stdout + waits.stderr
    assert _home(repo, "t")["kind"] == "main"
    gone = {"address": "127.0.0.1:1", "namespace": "default", "task_queue": "specd", "remote": "origin"}
    (repo.root / ".git" / "specd-temporal.json").write_text(json.dumps({"t": gone}))
    answered = repo.specd("approve", "t", "--note", "here")
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert _status(repo, "t")["checkpoints"][-1]["note"] == "here"


ORDERS = ["continue run answer", "continue answer run", "run continue answer", "run answer continue"]


@pytest.mark.parametrize("order", ORDERS)
def test_one_copy_one_history_the_answer_used_whatever_the_order(tmp_path: Path, order: str) -> None:
    """`continue` in the main tree, `run --all`, and an answer on the page with `specd ui` running (the control
    plane runs what is answered): in any order, the task exists once, each step runs once, the answer is used.
    (An answer cannot come first: a task that never ran waits for nothing.)"""
    repo = Repo(tmp_path, steps=("s1", "s2"), pause="s2")
    repo.new("a")
    ui = _Ui(repo)
    try:
        for verb in order.split():
            if verb == "continue":
                done = repo.specd("continue", "a", *_flags(repo))
            elif verb == "run":
                done = repo.specd("run", "--all", "--json", *_flags(repo))
            else:
                assert ui.approve("a", "from the page") == 303
                # COMPLETE is saved before the plane's run has made its last commit and let the task go: a
                # `continue` in that moment is refused (exit 2, another run holds it), as it should be
                ui.until(lambda: (now := _status(repo, "a"))["status"] == "COMPLETE" and not now.get("running"))
                continue
            assert done.returncode in (0, 3), (verb, done.stdout, done.stderr)  # done, or waiting at the gate
    finally:
        ui.stop()
    home = repo.root if order.startswith("continue") else repo.tree("a")
    other = repo.tree("a") if order.startswith("continue") else repo.root
    assert _status(repo, "a")["status"] == "COMPLETE"
    assert _states(repo, "a") == [home / ".specd" / "tasks" / "a" / ".pipeline-state.json"]  # one copy
    assert _steps(repo, "a") == ["s1", "s2"]  # one history, each step once
    assert _ledger(home, "a") == ["s1", "s2"]
    assert _ledger(other, "a") == []
    last = _status(repo, "a")["checkpoints"][-1]
    assert (last["answer"], last["note"], last["via"]) == ("approve", "from the page", "page")


class _Ui:
    """`specd ui` as a real process: the project's control plane, and its page's approve form."""

    def __init__(self, repo: Repo) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "specd", "ui", "--no-browser", "--port", "0"],
                                     cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        url = urlsplit(self.proc.stdout.readline().strip())
        self.port, self.token = url.port or 0, url.query.removeprefix("token=")

    def approve(self, task: str, note: str) -> int:
        from specd.web.auth import csrf_token

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        connection.request("POST", f"/tasks/{task}/approve", body=urlencode({"csrf": csrf_token(self.token),
                                                                            "note": note}),
                           headers={"Cookie": f"specd_ui={self.token}",
                                    "Content-Type": "application/x-www-form-urlencoded"})
        return connection.getresponse().status

    def until(self, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + DEADLINE  # a safety net only
        while not check():
            assert self.proc.poll() is None, self.proc.communicate()
            assert time.monotonic() < deadline, "the control plane never ran the answered task"
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=DEADLINE)
        assert self.proc.returncode == 0, err


def test_a_run_with_no_phases_names_the_roadmap_of_the_copy_it_reads(tmp_path: Path) -> None:
    """Found by hand: a task `specd run` put in its worktree stopped with "add `### Phase 1: ...` headings", and
    the person edited the main tree's ROADMAP.md, which the run never reads."""
    from specd.engine.waiting import no_phases
    from specd.tasks.project import Project

    main = tmp_path / "proj"
    tree = main / ".specd" / "worktrees" / "b"
    for root in (main, tree):
        (root / ".specd" / "tasks" / "b").mkdir(parents=True)
    said = no_phases("phases", "b", Project(tree), tree / ".specd" / "tasks" / "b")
    assert "headings to .specd/worktrees/b/.specd/tasks/b/ROADMAP.md, then `specd continue b`" in said
    said = no_phases("phases", "b", Project(main), main / ".specd" / "tasks" / "b")
    assert "headings to .specd/tasks/b/ROADMAP.md, then" in said
