"""Hooks: required and optional × fail, timeout, crash and missing file × pre and post × global and per step.

Pipeline `a → b`; the hook misbehaves only when it runs around `b`. A required
hook that misbehaves blocks the task (exit 1, BLOCKED, never IN_PROGRESS),
before `b` for a pre hook, after `b` ran exactly once for a post hook. An
optional one only warns and logs a "Hook failure" entry in CHANGELOG.md, and
the run completes. A missing hook file means the `.md` was deleted mid-run
(loading checked it existed), by the step just before the hook fires: that is a step changing specd's
machinery, so the file is put back and the step is BLOCKED, required hook or optional (issue 16).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from brain_harness import RUN_TIMEOUT
from torture_size import LARGE

from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.task import create_task

AGENT = r'''
import os, sys
from pathlib import Path
sys.stdin.read()
kind, step = os.environ["SPECD_KIND"], os.environ["SPECD_STEP"]
with open(os.environ["HOOK_LEDGER"], "a") as log:
    log.write(f"{kind} {step}\n")
if kind == "step" and step == os.environ.get("DELETE_DURING"):
    Path(os.environ["HOOK_FILE"]).unlink()
'''
ONLY_B = 'if [ "$SPECD_STEP" = b ]; then {}; fi; echo "hook $SPECD_STEP" >> "$HOOK_LEDGER"'
BEHAVIOUR = {"fail": ONLY_B.format("exit 3"), "timeout": ONLY_B.format("sleep 30"),
             "crash": ONLY_B.format("kill -9 $$")}
REASON = {"fail": "exited with status 3", "timeout": "timed out after 1 s", "crash": "status",
          "missing": "is missing"}


def project(tmp: Path, *, required: bool, failure: str, point: str, scope: str) -> tuple[Path, dict[str, str]]:
    root = tmp / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "hooks").mkdir()
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    hook_file = root / ".specd" / "hooks" / "check.md"
    hook_file.write_text("# check\n\nCheck it.\n", encoding="utf-8")
    spec: dict[str, object] = {"optional": not required}
    spec.update({"workflow": "check.md"} if failure == "missing" else {"run": BEHAVIOUR[failure], "timeout": 1})
    steps: list[dict[str, object]] = [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]
    data: dict[str, object] = {"schema_version": "1.0", "mode": "auto", "pipelines": {"main": steps}}
    if failure == "missing":  # outside the jail, which would refuse the deletion: the check after the step is tested
        data["agent"] = {"sandbox": False}
    if scope == "global":
        data["hooks"] = {f"{point}-step": spec}
    else:
        steps[1]["hooks"] = {point: spec}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp / "agent.py").write_text(AGENT, encoding="utf-8")
    # The ledger lies beside the project: the jail shows it only because this user's environment lists it.
    env = {**os.environ, "HOOK_LEDGER": str(tmp / "ledger.txt"), "HOOK_FILE": str(hook_file),
           "SPECD_JAIL_WRITE": str(tmp), "NO_COLOR": "1",
           "DELETE_DURING": ("a" if point == "pre" else "b") if failure == "missing" else ""}
    return root, env


def matrix() -> list[tuple[bool, str, str, str]]:
    """Every combination at the large size; in CI, half of them, such that each failure and each
    point × scope is still tried both required and optional."""
    cases = [(required, failure, point, scope) for failure in ("fail", "timeout", "crash", "missing")
             for point in ("pre", "post") for scope in ("global", "step") for required in (True, False)]
    if LARGE:
        return cases
    return [c for i, c in enumerate(cases) if c[0] == ((i // 2 + i // 8) % 2 == 0)]


@pytest.mark.parametrize(("required", "failure", "point", "scope"), matrix())
def test_hook_misbehaviour(tmp_path: Path, required: bool, failure: str, point: str, scope: str) -> None:
    root, env = project(tmp_path, required=required, failure=failure, point=point, scope=scope)
    specd = [sys.executable, "-m", "specd", "--project", str(root)]
    create_task(Project(root), "t", "hook torture")
    agent = f"cmd:{sys.executable} {tmp_path / 'agent.py'}"
    run = subprocess.run([*specd, "continue", "t", "--auto", "--agent", agent], env=env, capture_output=True,
                         text=True, timeout=RUN_TIMEOUT, check=False)
    output = run.stdout + run.stderr
    assert "Traceback" not in output
    task_dir = root / ".specd" / "tasks" / "t"
    state = StateStore(task_dir, "t").load()
    assert state is not None
    ledger = (tmp_path / "ledger.txt").read_text(encoding="utf-8").splitlines()
    steps_run = [line for line in ledger if line.startswith("step ")]
    if failure == "missing":
        assert run.returncode == 1, output
        assert state.status == "BLOCKED"
        assert ".specd/hooks/check.md (removed)" in state.reason
        assert (root / ".specd/hooks/check.md").read_text(encoding="utf-8") == "# check\n\nCheck it.\n"
        assert steps_run == (["step a"] if point == "pre" else ["step a", "step b"])
        return
    if required:
        assert run.returncode == 1, output
        assert state.status == "BLOCKED"
        assert REASON[failure] in state.reason
        assert steps_run == (["step a"] if point == "pre" else ["step a", "step b"])  # b never re-ran in a loop
    else:
        assert run.returncode == 0, output
        assert state.status == "COMPLETE"
        assert steps_run == ["step a", "step b"]
        changelog = (task_dir / "CHANGELOG.md").read_text(encoding="utf-8")
        assert "Hook failure" in changelog
        assert REASON[failure] in changelog
    failed = [r for r in state.history if r["kind"] == "hook" and r["outcome"] == "failed"]
    assert [r["step"] for r in failed] == ["b"]  # recorded once, around b
