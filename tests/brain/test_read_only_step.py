"""A lone `read_only: true` step (issue 30): its jail binds the tree read-only, and where no jail holds it, a
change to the tree blocks the step instead of becoming its work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from group_harness import Group, environ_has_bwrap

pytestmark = pytest.mark.skipif(not environ_has_bwrap(), reason="read-only binds need bubblewrap")


def solo(tmp_path: Path, agent: dict[str, object] | None = None) -> Group:
    g = Group(tmp_path)
    step = {"name": "solo", "workflow": "review.md", "read_only": True, **({"agent": agent} if agent else {})}
    g.h.pipeline({"main": [step]})
    (g.marks / "cues.json").write_text(json.dumps({"members": ["solo"], "wait_for": [], "outcomes": {}}))
    return g


def test_a_jailed_read_only_step_cannot_write_and_reports_through_its_result(tmp_path: Path) -> None:
    g = solo(tmp_path)
    (g.marks / "cues.json").write_text(json.dumps({"members": ["solo"], "wait_for": [],
                                                   "outcomes": {"solo": "approve"}}))
    result = g.cont()
    assert result.returncode == 0, result.stderr
    assert g.note("solo")["wrote_task"] is False
    assert g.note("solo")["wrote_root"] is False
    assert g.rows(step="solo")[0]["outcome"] == "approve"


def test_a_read_only_step_out_of_the_jail_that_writes_is_blocked(tmp_path: Path) -> None:
    g = solo(tmp_path, {"sandbox": False})
    (g.marks / "cues.json").write_text(json.dumps({"members": ["solo"], "wait_for": [],
                                                   "outcomes": {"solo": "approve"}}))
    result = g.cont()
    assert result.returncode == 1, result.stderr
    assert g.note("solo")["wrote_task"] is True
    assert "step 'solo' is read-only, but the tree changed while it ran" in g.h.status("t")["reason"]
