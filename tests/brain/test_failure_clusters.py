"""Failure clusters through the real CLI: the same failure three times is one row counted three times, and
the third holds the run for a human (exit 3), whom `retry`, `approve` and `skip` answer."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from brain_harness import Harness

from specd.state.clusters import fold, normalise

# Fails with a number, an id and a temp path that change on every attempt; the failure is still the same.
FLAKY = """\
import os, sys, time
if os.path.exists(os.path.join(os.path.dirname(__file__), "fixed")):
    print("done")
    sys.exit(0)
print(f"connect to db timed out after {time.time_ns() % 100000} ms (request {os.urandom(4).hex()}, "
      f"log /tmp/run-{os.getpid()}/db.log)")
sys.exit(1)
"""


def _flaky(h: Harness) -> str:
    script = h.dir / "flaky.py"
    script.write_text(FLAKY, encoding="utf-8")
    return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _fail_three_times(h: Harness) -> tuple[list[int], dict[str, object]]:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md"}]})
    h.new("t")
    agent = _flaky(h)
    codes = [h.specd("continue", "t", "--auto", "--agent", agent).returncode]
    codes += [h.specd("continue", "t").returncode for _ in range(2)]  # the run remembers its agent
    return codes, h.status("t")


def test_three_identical_failures_are_one_cluster_and_the_third_holds(h: Harness) -> None:
    codes, status = _fail_three_times(h)
    assert codes == [1, 1, 3]
    clusters = status["failure_clusters"]
    assert isinstance(clusters, list)
    assert len(clusters) == 1
    row = clusters[0]
    assert (row["step"], row["count"], row["kind"]) == ("a", 3, "step")
    assert "timed out after" in row["last_note"]
    assert row["first_seen"] <= row["last_seen"]
    assert status["status"] == "WAITING_FOR_HUMAN"
    assert status["waiting"]["kind"] == "failure_cluster"
    assert "failed this way 3 times" in str(status["reason"])
    for verb in ("specd retry t", "specd approve t", "specd skip t"):
        assert verb in str(status["reason"])

    md = (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")
    assert "## Failure clusters" in md
    assert md.count("| a | - | step |") == 1  # one row, not three
    assert "| 3 | a |" in md
    snapshot = json.loads((h.task_dir("t") / ".pipeline-state.json").read_text(encoding="utf-8"))
    assert "failures" not in snapshot

    # Held: a plain continue runs nothing and says so, with exit 3.
    held = h.specd("continue", "t")
    assert held.returncode == 3
    assert "waiting for a decision on 'a'" in held.stderr


def test_retry_answers_the_hold_and_the_step_runs_again(h: Harness) -> None:
    codes, _ = _fail_three_times(h)
    assert codes[-1] == 3
    (h.dir / "fixed").write_text("yes", encoding="utf-8")
    answered = h.specd("retry", "t")
    assert answered.returncode == 0, answered.stderr
    done = h.specd("continue", "t")
    assert done.returncode == 0, done.stderr
    assert h.status("t")["status"] == "COMPLETE"


@pytest.mark.parametrize(("verb", "runs_a"), [("approve", True), ("skip", False)])
def test_approve_runs_it_again_and_skip_goes_on_without_it(h: Harness, verb: str, runs_a: bool) -> None:
    codes, _ = _fail_three_times(h)
    assert codes[-1] == 3
    answered = h.specd(verb, "t")
    assert answered.returncode == 0, answered.stderr
    # The agent still fails. Approve gives a a fresh set of tries, so its next failure is BLOCKED, not held;
    # skip goes on to b, whose same message is another step's failure: a cluster of its own.
    again = h.specd("continue", "t")
    assert again.returncode == 1, again.stderr
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    counts = [(c["step"], c["count"]) for c in status["failure_clusters"]]
    if runs_a:
        assert counts == [("a", 4)]
    else:
        assert counts == [("a", 3), ("b", 1)]
        assert [(r["step"], r["outcome"]) for r in status["history"]] == [("a", "skipped")]


def test_normalise_takes_out_what_changes_between_attempts() -> None:
    first = "step 'a' failed: timed out after 1234 ms at 2026-11-23T09:24:01+00:00, id 9f8e7d6c, /tmp/run-77/x.log"
    second = "step 'a' failed: timed out after 99 ms at 2026-11-24T10:00:00Z, id 0a1b2c3d,  /tmp/run-8/x.log"
    assert normalise(first) == normalise(second)
    assert normalise(first) != normalise("step 'a' failed: permission denied")
    assert "facade" in normalise("a word of six hex letters stays: facade")
    # a random id is all letters once in 2,500 attempts: eight hex letters are an id too
    assert normalise("request 4f0c9e1a failed") == normalise("request bfeacdab failed") == "request # failed"


def test_an_old_failure_list_folds_into_clusters() -> None:
    failures = [{"at": f"2026-11-23T09:2{i}:00+00:00", "step": "y", "phase": "02", "kind": "step",
                 "reason": f"step 'y' failed: agent command exited with status {i}"} for i in range(3)]
    failures.append({"at": "2026-11-23T09:30:00+00:00", "step": "z", "kind": "hook", "reason": "other"})
    clusters = fold(failures)
    assert [(c["step"], c["count"]) for c in clusters] == [("y", 3), ("z", 1)]
    assert clusters[0]["first_seen"] == "2026-11-23T09:20:00+00:00"
    assert clusters[0]["last_note"].endswith("status 2")
