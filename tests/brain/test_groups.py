"""Read-only steps side by side (issue 30), through the real CLI with three command-agent reviewers.

The acceptance: the reviewers of a `parallel` group overlap in time (from their own timestamps and from
their history rows), none can write a file, and `any-revise` routes to revise when one says revise.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from group_harness import MEMBERS, Group, environ_has_bwrap

pytestmark = pytest.mark.skipif(not environ_has_bwrap(), reason="read-only binds need bubblewrap")


def overlapping(spans: list[tuple[object, object]]) -> bool:
    """Every span starts before every other one ends."""
    return all(a[0] < b[1] for a in spans for b in spans if a is not b)  # type: ignore[operator]


def test_three_reviewers_overlap_none_writes_and_any_revise_routes_to_revise(tmp_path: Path) -> None:
    g = Group(tmp_path)
    g.cues(outcomes={"security": "approve", "style": "revise", "tests": "approve"})
    result = g.cont()
    assert result.returncode == 0, result.stderr
    notes = {m: g.note(m) for m in MEMBERS}
    assert overlapping([(n["start"], n["end"]) for n in notes.values()])
    for member, note in notes.items():
        assert note["wrote_task"] is False, (member, note)
        assert note["wrote_root"] is False, (member, note)
        assert note["error_task"] == "Read-only file system"
    assert not list(g.h.root.rglob("by-*.txt"))
    rows = g.rows(group="reviews")
    assert sorted(r["step"] for r in rows) == sorted(MEMBERS)
    assert overlapping([(r["started_at"], r["finished_at"]) for r in rows])  # the rows say it too
    assert all(r["usage"]["cost_usd"] == 0.01 and r["transcript"] for r in rows)  # each its own cost, transcript
    assert len({r["transcript"] for r in rows}) == 3
    group_row = g.rows(step="reviews", kind="step")[0]
    assert group_row["outcome"] == "revise"
    assert group_row["members"] == {"security": "approve", "style": "revise", "tests": "approve"}
    assert group_row["usage"]["cost_usd"] == pytest.approx(0.03)
    assert g.calls()[-1] == "revise"  # any-revise routed to revise
    revise_prompt = g.note("revise")["prompt"]
    assert "style: revise — style says revise" in revise_prompt  # the reviews reach the revise step
    written = (g.h.task_dir("t") / "reviews.group.md").read_text(encoding="utf-8")
    assert "- security: approve — security says approve" in written


def test_all_approving_members_end_the_pipeline_without_revise(tmp_path: Path) -> None:
    g = Group(tmp_path)
    g.cues(outcomes={m: "approve" for m in MEMBERS})
    result = g.cont()
    assert result.returncode == 0, result.stderr
    assert "revise" not in g.calls()
    assert g.rows(step="reviews", kind="step")[0]["outcome"] == "approve"


def test_a_combine_map_decides_in_the_order_written(tmp_path: Path) -> None:
    g = Group(tmp_path, combine={"approve": "all", "revise": "any"})
    g.cues(outcomes={"security": "approve", "style": "approve", "tests": "revise"})
    assert g.cont().returncode == 0
    assert g.rows(step="reviews", kind="step")[0]["outcome"] == "revise"


def test_a_failing_member_blocks_the_group_and_continue_reruns_only_it(tmp_path: Path) -> None:
    g = Group(tmp_path)
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=(), fail="tests")
    result = g.cont()
    assert result.returncode == 1, result.stderr
    assert "member 'tests' failed" in result.stderr
    assert g.h.status("t")["status"] == "BLOCKED"
    assert sorted(r["step"] for r in g.rows(group="reviews", kind="step")) == ["security", "style"]
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=())
    (g.marks / "calls.txt").unlink()
    result = g.cont()
    assert result.returncode == 0, result.stderr
    assert g.calls() == ["tests"]  # the two that finished are not run again
    assert g.rows(step="reviews", kind="step")[0]["outcome"] == "approve"


def test_kill_9_during_the_group_then_continue_reruns_only_the_unfinished_member(tmp_path: Path) -> None:
    g = Group(tmp_path)
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=())
    (g.marks / "hold.json").write_text(json.dumps(["tests"]))
    proc = g.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the two others' rows are saved while `tests` still runs
        if (g.marks / "held-tests").exists() and len(g.rows(group="reviews", kind="step")) == 2:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    else:
        pytest.fail("the two free members never finished while the third was held")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    (g.marks / "hold.json").write_text("[]")
    (g.marks / "calls.txt").unlink()
    result = g.cont()
    assert result.returncode == 0, result.stderr
    assert g.calls() == ["tests"]  # security and style finished before the kill: not run again
    rows = g.rows(group="reviews", kind="step")
    assert sorted(r["step"] for r in rows) == sorted(MEMBERS)
    assert g.rows(step="reviews", kind="step")[0]["members"] == {m: "approve" for m in MEMBERS}


def test_a_member_out_of_the_jail_that_writes_fails_the_group(tmp_path: Path) -> None:
    g = Group(tmp_path)
    data = json.loads((g.h.root / ".specd" / "pipeline.json").read_text(encoding="utf-8"))
    data["pipelines"]["main"][0]["parallel"][1]["agent"] = {"sandbox": False}  # no jail can stop its writes
    (g.h.root / ".specd" / "pipeline.json").write_text(json.dumps(data), encoding="utf-8")
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=())
    result = g.cont()
    assert result.returncode == 1, result.stderr
    assert g.note("style")["wrote_task"] is True
    assert g.note("security")["wrote_task"] is False  # the jailed ones still could not
    reason = g.h.status("t")["reason"]
    assert "group 'reviews' is read-only, but the tree changed while it ran" in reason
    assert "by-style.txt" in reason
    assert not g.rows(step="reviews", kind="step")  # no combined outcome: nothing routed on it


def test_a_member_that_ends_first_leaves_the_others_running(tmp_path: Path) -> None:
    g = Group(tmp_path)  # specd sweeps what a member left behind when it ends: never the members still running
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=(), after={"security": "style", "tests": "style"})
    result = g.cont()
    assert result.returncode == 0, result.stderr
    rows = {r["step"]: r for r in g.rows(group="reviews")}
    assert {name: row["kind"] for name, row in rows.items()} == dict.fromkeys(MEMBERS, "step")
    assert rows["style"]["finished_at"] < rows["security"]["finished_at"]


def test_pipeline_show_and_status_show_the_group_and_its_members(tmp_path: Path) -> None:
    g = Group(tmp_path)
    shown = g.h.specd("pipeline", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    group = json.loads(shown.stdout)["pipelines"]["main"][0]
    assert group["combine"] == "any-revise"
    assert group["combine_rules"] == [["revise", "any"], ["approve", "all"]]
    assert [(m["name"], m["read_only"]) for m in group["parallel"]] == [(m, True) for m in MEMBERS]
    text = g.h.specd("pipeline", "show").stdout
    assert "reviews side by side, combine any-revise" in text
    assert "security" in text
    assert "read-only" in text

    g.cues(outcomes={"security": "revise", "style": "approve", "tests": "approve"})
    ran = g.cont()
    assert ran.returncode == 0
    ticked = ran.stderr.splitlines()
    first = next(i for i, line in enumerate(ticked) if line.startswith("✔ reviews → revise"))
    # the group's line, then a line per member: each one shown, none cut off mid-list
    assert [line.strip() for line in ticked[first + 1:first + 4]] == [
        f"- {m}: {o} — {m} says {o}" for m, o in (("security", "revise"), ("style", "approve"), ("tests", "approve"))]
    status = g.h.specd("status", "t").stdout
    assert "security (in reviews)" in status
    assert "reviews (of security: revise, style: approve, tests: approve)" in status
    # the group's row shows its summary's first line: its members' lines are their own rows, not stray lines
    assert not [line for line in status.splitlines() if line.startswith("- ")]

    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    token = "group-test-token-0123456789"
    with TestClient(create_app(Project(g.h.root), token), base_url="http://127.0.0.1:8765") as client:
        client.cookies.set("specd_ui", token)
        page = client.get("/tasks/t").text
    assert '<span class="muted">(in reviews)</span>' in page  # the page's steps table
    assert "(of security: revise, style: approve, tests: approve)" in page


def test_a_groups_hooks_and_when_work_as_for_any_step(tmp_path: Path) -> None:
    g = Group(tmp_path)
    data = json.loads((g.h.root / ".specd" / "pipeline.json").read_text(encoding="utf-8"))
    log = g.marks / "hooks.txt"
    data["pipelines"]["main"][0]["hooks"] = {"post": {"run": f"echo post >> {log}"}}
    data["pipelines"]["main"].insert(0, {"name": "again", "parallel": [
        {"name": "extra", "workflow": "review.md", "read_only": True}], "combine": "all-approve",
        "when": "steps.reviews.outcome == 'revise'"})
    (g.h.root / ".specd" / "pipeline.json").write_text(json.dumps(data), encoding="utf-8")
    g.cues(outcomes={m: "approve" for m in MEMBERS}, wait_for=())
    result = g.cont()
    assert result.returncode == 1, result.stderr  # `again` names `reviews`, which has not run when it is reached
    assert "step 'again': when" in result.stderr
    data["pipelines"]["main"][0]["when"] = "mode == 'interactive'"
    (g.h.root / ".specd" / "pipeline.json").write_text(json.dumps(data), encoding="utf-8")
    result = g.cont()
    assert result.returncode == 0, result.stderr
    assert g.rows(step="again")[0]["outcome"] == "skipped"  # `when:` false skips the whole group
    assert "extra" not in g.calls()
    assert log.read_text() == "post\n"  # the group's post hook ran once, after its members
