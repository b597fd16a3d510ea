"""`specd status` over 10,000 tasks with history, against `specd status` over one.

One task is run through a 20-step pipeline with the scripted agent, so it has
a real run state and history; its folder is then copied to make the rest.
Both listings run as real subprocesses, alternately, and the medians are
compared. Goals: 10,000 tasks in <= 1 s, and <= 20x one task.

    python bench/status.py [--tasks 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def specd(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "specd", "--project", str(project), *args], capture_output=True,
                          text=True, env=env, check=False)


def make_project(base: Path, tasks: int) -> Path:
    root = base / f"p{tasks}"
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    pipeline = {"schema_version": "1.0", "mode": "auto",
                "pipelines": {"main": [{"name": f"s{i}", "workflow": "w.md"} for i in range(20)]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
    script = base / "script.yaml"
    script.write_text("entries:\n  - sticky: true\n    summary: step finished\n", encoding="utf-8")
    assert specd(root, "new", "task-0").returncode == 0
    ran = specd(root, "continue", "task-0", "--auto", "--agent", f"scripted:{script}")
    assert ran.returncode == 0, ran.stderr
    source = root / ".specd" / "tasks" / "task-0"
    for i in range(1, tasks):
        shutil.copytree(source, source.with_name(f"task-{i}"))
    return root


def clock(project: Path, cold: bool = False) -> float:
    """One `specd status` listing; ``cold`` removes the status index first, as after a fresh clone."""
    if cold:
        shutil.rmtree(project / ".specd" / ".cache", ignore_errors=True)
    start = time.perf_counter()
    result = specd(project, "status")
    elapsed = time.perf_counter() - start
    assert result.returncode == 0, result.stderr
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one, many = make_project(Path(tmp), 1), make_project(Path(tmp), args.tasks)
        clock(one), clock(many)  # warm the file cache
        small, large, cold = [], [], []
        for _ in range(args.runs):
            small.append(clock(one))
            large.append(clock(many))
            cold.append(clock(many, cold=True))
    s, m, c = statistics.median(small), statistics.median(large), statistics.median(cold)
    print(f"specd status, 1 task:        median {s * 1000:8.1f} ms over {args.runs} runs")
    print(f"specd status, {args.tasks} tasks, warm: median {m * 1000:8.1f} ms over {args.runs} runs "
          f"(goal <= 300 ms at 10,000: {'met' if m <= 0.3 else 'MISSED'})")
    print(f"specd status, {args.tasks} tasks, cold (no index): median {c * 1000:8.1f} ms "
          f"(goal < 1500 ms at 10,000: {'met' if c < 1.5 else 'MISSED'})")
    print(f"ratio warm: {m / s:.1f}x (goal <= 20x: {'met' if m / s <= 20 else 'MISSED'})")
    return 0 if m <= 1 and m / s <= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
