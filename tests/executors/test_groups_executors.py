"""A `parallel` group of read-only reviewers (issue 30) behaves the same on every executor: local worktrees, and
Temporal workers in their own clones (where each activity runs the group inside a `specd` child, as any step).

The reviewers have their own agent (a step's backend wins over the workers' `--agent`): each notes that it
started in a folder outside every tree (the one place besides $SPECD_RESULT a read-only step may write), waits
until both have, tries to write in its tree, and reports an outcome; the security reviewer says revise.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from executor_harness import Repo
from test_checks_executors import history

REVIEWER = r'''
import json, os, sys, time
from pathlib import Path
marks = Path(sys.argv[1])
step, task = os.environ["SPECD_STEP"], os.environ["SPECD_TASK"]
sys.stdin.read()
(marks / f"started-{task}-{step}").write_text("x")
deadline = time.monotonic() + 120
while time.monotonic() < deadline and len(list(marks.glob(f"started-{task}-*"))) < 2:
    time.sleep(0.05)
try:
    Path(f"by-{step}.txt").write_text("a read-only step wrote this")
    wrote = True
except OSError:
    wrote = False
(marks / f"wrote-{task}-{step}").write_text(json.dumps(wrote))
outcome = "revise" if step == "security" else "approve"
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": outcome, "summary": f"{step}: {outcome}"}))
'''


def test_a_group_of_read_only_reviewers_runs_side_by_side_on_every_executor(executor: Any, repo: Repo,
                                                                           tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (repo.dir / "reviewer.py").write_text(REVIEWER, encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(repo.dir / 'reviewer.py'))} {shlex.quote(str(marks))}"
    reviewer = {"backend": "command", "command": command}
    members = [{"name": name, "workflow": "review.md", "read_only": True, "agent": reviewer}
               for name in ("security", "style")]
    steps = [{"name": "s1", "workflow": "work.md"},
             {"name": "reviews", "parallel": members, "combine": "any-revise",
              "outcomes": {"revise": "fix", "approve": "end"}},
             {"name": "fix", "workflow": "work.md"}]
    repo.write(".specd/workflows/review.md", "---\ndescription: review\noutcomes: [approve, revise]\n---\n\n# r\n")
    repo.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "pipelines": {"main": steps}}))
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "a review group")
    repo.new("g")

    done = executor.run("g", "--auto", env={"SPECD_JAIL_WRITE": str(marks)})

    assert done.returncode == 0, done.stdout + done.stderr
    assert executor.status("g") == "COMPLETE"
    assert Counter(s for _, s, _, _ in repo.ledger()) == Counter({"s1": 1, "fix": 1})  # any-revise → fix
    assert json.loads((marks / "wrote-g-security").read_text()) is False
    assert json.loads((marks / "wrote-g-style").read_text()) is False
    rows = history(repo, "g")
    members = [r for r in rows if r.get("group") == "reviews"]
    assert sorted((r["step"], r["outcome"]) for r in members) == [("security", "revise"), ("style", "approve")]
    spans = [(datetime.fromisoformat(r["started_at"]), datetime.fromisoformat(r["finished_at"])) for r in members]
    assert spans[0][0] < spans[1][1]
    assert spans[1][0] < spans[0][1]  # side by side, from the rows' own times
    group = next(r for r in rows if r["step"] == "reviews" and r["kind"] == "step")
    assert group["outcome"] == "revise"
    assert group["members"] == {"security": "revise", "style": "approve"}
