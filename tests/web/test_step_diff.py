"""A step's page shows that step's own commit (``specd/web/detail.py``), found by its subject, whole.

The default pipeline has a `plan` before the phases and a `plan` in each phase; git's --grep matches a line's part,
and "docs(t): plan complete" is also the start of "docs(t): plan complete (phase 1)", so the top-level plan's page
showed the last phase's plan commit instead of its own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

from specd.git import recovery
from specd.web import detail


def _commit(root: Path, name: str, text: str, subject: str) -> None:
    (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "-C", str(root), "add", name], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-q", "-m",
                    subject], check=True)


def test_each_step_row_shows_its_own_commit_not_one_whose_subject_starts_the_same(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _commit(tmp_path, "PLAN.md", "the whole plan\n", "docs(t): plan complete")
    _commit(tmp_path, "phase-1.md", "phase one's plan\n", "docs(t): plan complete (phase 1)")
    _commit(tmp_path, "other.md", "another task\n", "docs(t2): plan complete")
    project = SimpleNamespace(root=tmp_path)
    top = detail._diff(project, "t", {"kind": "step", "step": "plan"})  # type: ignore[arg-type]
    phase = detail._diff(project, "t", {"kind": "step", "step": "plan", "phase": 1})  # type: ignore[arg-type]
    assert "the whole plan" in top
    assert "phase one's plan" not in top
    assert "phase one's plan" in phase
    assert "the whole plan" not in phase
    assert detail._diff(project, "t", {"kind": "step", "step": "review"}) == ""  # type: ignore[arg-type]


def test_a_step_visited_twice_shows_each_visit_its_own_commit(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"GIT_COMMITTER_DATE": "2026-11-30T10:00:05Z"}
    for name, text, when in (("REVIEW.md", "first review\n", "2026-11-30T10:00:05Z"),
                             ("REVIEW.md", "second review\n", "2026-11-30T10:07:42Z")):
        env["GIT_COMMITTER_DATE"] = when
        (tmp_path / name).write_text(text, encoding="utf-8")
        subprocess.run(["git", "-C", str(tmp_path), "add", name], check=True)
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-q",
                        "-m", "docs(t): review complete"], check=True, env={**os.environ, **env})
    project = SimpleNamespace(root=tmp_path)
    first = detail._diff(project, "t", {"kind": "step", "step": "review",  # type: ignore[arg-type]
                                        "finished_at": "2026-11-30T10:00:04.700000Z"})
    second = detail._diff(project, "t", {"kind": "step", "step": "review",  # type: ignore[arg-type]
                                         "finished_at": "2026-11-30T10:07:41.900000Z"})
    assert "+first review" in first
    assert "second review" not in first
    assert "+second review" in second
    unknown = detail._diff(project, "t", {"kind": "step", "step": "review"})  # type: ignore[arg-type]
    assert "+second review" in unknown  # no end recorded: the latest, as before


def test_a_step_committed_by_recovery_after_a_kill_is_found_too(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _commit(tmp_path, "a.md", "phase work\n", f"docs(t): execute (phase 2) complete ({recovery.RECOVERED})")
    _commit(tmp_path, "b.md", "top work\n", f"docs(t): execute complete ({recovery.APPROVED})")
    project = SimpleNamespace(root=tmp_path)
    phase = detail._diff(project, "t", {"kind": "step", "step": "execute", "phase": 2})  # type: ignore[arg-type]
    top = detail._diff(project, "t", {"kind": "step", "step": "execute"})  # type: ignore[arg-type]
    assert "+phase work" in phase
    assert "+top work" in top
    assert "phase work" not in top
