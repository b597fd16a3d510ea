"""Two-way with specdacular: every state specd writes into config.json routes, in specdacular's own routing
table (``oracle``), to the step specd runs next.

The run is `specd demo` (the built-in pipeline, two phases and a fix phase), driven as a user runs it. specd
commits the task folder before every step and at the end, so each save of config.json is a commit; each
state is read back from git as it was then and routed by the oracle.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from oracle import LOOP, Route, route

TASK = "word-count"
FOLDER = f".specd/tasks/{TASK}"
IDENTITY = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com"}
FINISHED = re.compile(rf"docs\({TASK}\): (\S+) complete(?: \(phase (\S+)\))?$")


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True).stdout


def state_at(root: Path, commit: str, into: Path) -> Path:
    """The task folder as it was at ``commit``."""
    archive = git(root, "archive", "--format=tar", commit, FOLDER)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / FOLDER


def expected(subjects: list[str]) -> Route:
    """The next step specd ran, from the commit subjects from the save onwards."""
    for subject in subjects:
        if match := FINISHED.fullmatch(subject):
            step, phase = match.groups()
            return Route(step, LOOP if phase else "main", int(phase.partition(".")[0]) if phase else None)
        if subject == f"docs({TASK}): run state COMPLETE":
            return Route(None, "main", None)
    raise AssertionError(f"nothing ran after the save: {subjects}")


def test_every_state_of_the_demo_routes_in_specdacular_to_the_step_specd_runs_next(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | IDENTITY | {"NO_COLOR": "1"}
    run = subprocess.run([sys.executable, "-m", "specd", "demo", "--dir", "X"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    root = tmp_path / "X"
    assert git(root, "status", "--porcelain") == b""  # every save is in a commit
    commits = git(root, "log", "--reverse", "--format=%H %s").decode().splitlines()
    hashes, subjects = [c.split(" ", 1)[0] for c in commits], [c.split(" ", 1)[1] for c in commits]
    touched = set(git(root, "log", "--format=%H", "--", f"{FOLDER}/config.json").decode().split())
    saves = [i for i, commit in enumerate(hashes) if commit in touched]
    seen: list[tuple[Route, dict[str, object]]] = []
    for i in saves:
        task_dir = state_at(root, hashes[i], tmp_path / "at" / hashes[i])
        config = json.loads((task_dir / "config.json").read_text(encoding="utf-8"))
        fields = {"stage": config["stage"], **{k: config["phases"].get(k) for k in ("current", "current_status")}}
        got = route(task_dir)  # raises NoRow for a value specdacular does not know
        assert got == expected(subjects[i:]), (subjects[i], fields)
        seen.append((got, fields))
    # The run went through every kind of state: each step of the pipeline, the fix phase, the end.
    routed = {(r.step, r.pipeline) for r, _ in seen}
    assert routed >= {("discuss", "main"), ("research", "main"), ("plan", "main"), ("plan", LOOP),
                      ("execute", LOOP), ("review", LOOP), (None, "main")}
    assert {"stage": "planning", "current": 1, "current_status": "pending"} in [f for _, f in seen]  # 01.1's plan
    assert seen[-1][1] == {"stage": "complete", "current": 2, "current_status": "completed"}
