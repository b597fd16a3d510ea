"""A task waiting for a person, looked at again and again, adds nothing to the user's branch.

Each `specd continue` on a task still waiting at its gate starts, asks, finds no answer and stops again. It used to
commit `docs(<task>): run state WAITING_FOR_HUMAN` every time, changing only `updated_at`/`heartbeat_at` (and the
markdown's "Updated" line): one commit per poll. A run that changed nothing leaves the run state as it was, byte for
byte; a real change (an answer, a re-planned pipeline) is committed as before, and so is a record a killed run left
uncommitted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from git_harness import GitProject

WAIT = "docs(n1): run state WAITING_FOR_HUMAN"
STATE = (".pipeline-state.json", ".pipeline-state.md", ".pipeline-state.history.jsonl", "config.json")


def _gated(gp: GitProject) -> None:
    """a, then b behind a gate (semi-auto), then c; the task n1 waits at b's gate after its first run."""
    steps = [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md", "pause_in_semi_auto": True},
             {"name": "c", "workflow": "work.md"}]
    gp.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "mode": "semi-auto",
                                                 "pipelines": {"main": steps}}))
    gp.git("commit", "-q", "-am", "a gated pipeline")
    gp.new("n1")
    first = gp.specd("continue", "n1", "--agent", gp.agent_spec())
    assert first.returncode == 3, first.stdout + first.stderr
    assert gp.commits()[-1][0] == WAIT


def _state(gp: GitProject) -> dict[str, bytes]:
    folder = gp.root / ".specd" / "tasks" / "n1"
    return {name: (folder / name).read_bytes() for name in STATE}


def _ask_again(gp: GitProject, times: int = 3) -> None:
    for _ in range(times):
        time.sleep(1.1)  # a later second: a rewritten state would show it in its times
        again = gp.specd("continue", "n1")
        assert again.returncode == 3, again.stdout + again.stderr
        assert "gate before 'b'" in again.stdout + again.stderr


def test_continue_on_a_waiting_task_adds_no_commit_and_leaves_the_tree_clean(gp: GitProject) -> None:
    _gated(gp)
    head, before = gp.git("rev-parse", "HEAD"), _state(gp)
    status = json.loads(gp.specd("status", "n1", "--json").stdout)
    _ask_again(gp)
    assert gp.git("rev-parse", "HEAD") == head, gp.commits()[-4:]
    assert gp.git("status", "--porcelain") == ""
    assert _state(gp) == before  # not even rewritten: the times say when the state last changed
    now = json.loads(gp.specd("status", "n1", "--json").stdout)
    assert (now["status"], now["updated_at"]) == ("WAITING_FOR_HUMAN", status["updated_at"])


def test_an_answer_while_waiting_is_still_committed(gp: GitProject) -> None:
    _gated(gp)
    _ask_again(gp, times=1)
    approved = gp.specd("approve", "n1", "--note", "go on")
    assert approved.returncode == 0, approved.stderr
    done = gp.specd("continue", "n1")
    assert done.returncode == 0, done.stdout + done.stderr
    subjects = [subject for subject, _ in gp.commits()]
    assert subjects[-6:] == [WAIT, "docs(n1): starting b", "docs(n1): b complete", "docs(n1): starting c",
                             "docs(n1): c complete", "docs(n1): run state COMPLETE"]
    starting_b = gp.git("show", "HEAD~4:.specd/tasks/n1/.pipeline-state.json")
    assert "go on" in starting_b  # the answer, with its note, in the commit that starts the step it let through
    assert gp.git("status", "--porcelain") == ""


def test_a_pipeline_replanned_while_waiting_is_committed_once(gp: GitProject) -> None:
    _gated(gp)
    pipeline = json.loads((gp.root / ".specd" / "pipeline.json").read_text())
    pipeline["pipelines"]["main"].append({"name": "d", "workflow": "work.md"})
    gp.write(".specd/pipeline.json", json.dumps(pipeline))
    gp.git("commit", "-q", "-am", "one more step")
    _ask_again(gp, times=1)
    subject, files = gp.commits()[-1]
    assert subject == WAIT
    assert ".specd/tasks/n1/.pipeline-state.json" in files  # the new digest and the note saying it changed
    assert "pipeline changed" in gp.git("show", "HEAD:.specd/tasks/n1/.pipeline-state.json")
    head = gp.git("rev-parse", "HEAD")
    _ask_again(gp, times=2)
    assert gp.git("rev-parse", "HEAD") == head
    assert gp.git("status", "--porcelain") == ""


def test_a_wait_a_killed_run_left_uncommitted_is_committed_by_the_next_look(gp: GitProject) -> None:
    """As after a kill -9 between the run's last save and its commit: the run state on disk is newer than git's.
    The next run changes nothing in it, and still commits it."""
    _gated(gp)
    recorded = _state(gp)
    gp.git("reset", "-q", "HEAD~1")  # the waiting run's commit never happened
    assert gp.git("status", "--porcelain")
    _ask_again(gp, times=1)
    assert gp.commits()[-1][0] == WAIT
    assert gp.git("status", "--porcelain") == ""
    assert _state(gp) == recorded
    assert gp.git("show", "HEAD:.specd/tasks/n1/.pipeline-state.json").encode() == recorded[".pipeline-state.json"]


def test_the_markdown_view_is_not_rewritten_when_it_reads_the_same(gp: GitProject) -> None:
    _gated(gp)
    md = gp.root / ".specd" / "tasks" / "n1" / ".pipeline-state.md"
    stamp = md.stat().st_mtime_ns
    _ask_again(gp, times=1)
    assert md.stat().st_mtime_ns == stamp
    assert Path(md).read_text(encoding="utf-8").count("WAITING_FOR_HUMAN") >= 1
