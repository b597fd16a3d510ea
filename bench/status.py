"""`specd status` over 10,000 tasks with history, against `specd status` over one.

One task is run through a 20-step pipeline with the scripted agent, so it has
a real run state and history; its folder is then copied to make the rest.
Every listing is a real `specd status` process (piped: plain text), timed
whole, start-up included, alternately: one task, 10,000 cold (no status
index, as after a fresh clone), 10,000 warm, and with --large 30,000 warm.
With --baseline, another checkout's specd is timed in the same rounds.
Goals (issue 21): 10,000 cold < 1.5 s, warm < 300 ms; 30,000 warm < 1 s.

    python bench/status.py [--tasks 10000] [--runs 3] [--large 30000] [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def specd(project: Path, *args: str, code: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "120"}
    # -P: the current folder is not put on sys.path, so ``code`` is the specd that runs (a checkout run from
    # would otherwise shadow the baseline).
    return subprocess.run([sys.executable, "-P", "-m", "specd", "--project", str(project), *args],
                          capture_output=True, text=True, env=env, check=False, cwd=project)


def make_project(base: Path, tasks: int, like: Path | None = None) -> Path:
    """A project of ``tasks`` finished tasks; with ``like``, the tasks of that project are copied first."""
    root = base / f"p{tasks}"
    if (root / ".specd" / "tasks" / f"task-{tasks - 1}" / "config.json").exists():
        return root  # kept from an earlier run (--keep)
    if like is not None:
        shutil.copytree(like, root, symlinks=True)
        shutil.rmtree(root / ".specd" / ".cache", ignore_errors=True)
        source = root / ".specd" / "tasks" / "task-0"
        for i in range(len(list(source.parent.iterdir())), tasks):
            shutil.copytree(source, source.with_name(f"task-{i}"))
        return root
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


def clock(project: Path, cold: bool = False, code: Path = ROOT) -> float:
    """One `specd status` listing (piped, as a script reads it); ``cold`` removes the status index first,
    as after a fresh clone. Wall time of the whole process, start-up included."""
    if cold:
        shutil.rmtree(project / ".specd" / ".cache", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = specd(project, "status", code=code)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    # The CPU it took (user + system): on 2 cores shared with other work, wall time is mostly the queue.
    CPU.setdefault(project, []).append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed


CPU: dict[Path, list[float]] = {}


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--large", type=int, default=0, help="also time a warm listing of this many tasks (30000)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose specd is timed alternately")
    parser.add_argument("--keep", type=Path, help="make the projects here, and reuse them when they are there")
    args = parser.parse_args()
    codes = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        one, many = make_project(base, 1), make_project(base, args.tasks)
        large = make_project(base, args.large, like=many) if args.large else None
        for _, code in codes:
            clock(one, code=code), clock(many, code=code)  # warm the file cache
        times: dict[tuple[str, str], list[float]] = {}
        print(f"start: {load()}")
        for _ in range(args.runs):  # alternately: each code, each kind, in turn
            for name, code in codes:
                timed(one, False, code, "one", name, times)
                timed(many, True, code, "cold", name, times)
                timed(many, False, code, "warm", name, times)
                if large is not None:
                    clock(large, code=code)  # the index of this code's format
                    timed(large, False, code, "large", name, times)
        print(f"end:   {load()}")
        return report(args, codes, times, large is not None)  # before 40,000 folders are deleted


def timed(project: Path, cold: bool, code: Path, kind: str, name: str, times: dict[tuple[str, str], list[float]],
          ) -> None:
    times.setdefault((name, kind), []).append(clock(project, cold=cold, code=code))
    times.setdefault((name, kind + " cpu"), []).append(CPU[project][-1])


def report(args: argparse.Namespace, codes: list[tuple[str, Path]], times: dict[tuple[str, str], list[float]],
           large: bool) -> int:
    med = {key: statistics.median(value) for key, value in times.items()}
    for name, _ in codes:
        print(f"[{name}] CPU (user + system), median: " + ", ".join(
            f"{kind} {med[(name, kind + ' cpu')] * 1000:.0f} ms" for kind in ("one", "cold", "warm", "large")
            if (name, kind + " cpu") in med))
    for name, _ in codes:
        s, c, m = med[(name, "one")], med[(name, "cold")], med[(name, "warm")]
        print(f"[{name}] specd status, 1 task:            median {s * 1000:8.1f} ms over {args.runs} runs")
        print(f"[{name}] specd status, {args.tasks} tasks, cold:  median {c * 1000:8.1f} ms "
              f"(goal < 1500 ms at 10,000: {'met' if c < 1.5 else 'MISSED'})")
        print(f"[{name}] specd status, {args.tasks} tasks, warm:  median {m * 1000:8.1f} ms "
              f"(goal < 300 ms at 10,000: {'met' if m < 0.3 else 'MISSED'}); {m / s:.1f}x one task")
        if large:
            big = med[(name, "large")]
            print(f"[{name}] specd status, {args.large} tasks, warm: median {big * 1000:8.1f} ms "
                  f"(goal < 1000 ms at 30,000: {'met' if big < 1 else 'MISSED'})")
    if args.baseline:
        for kind in ("one", "cold", "warm", *(("large",) if large else ())):
            print(f"{kind}: this / baseline = {med[('this', kind)] / med[('baseline', kind)]:.2f} wall, "
                  f"{med[('this', kind + ' cpu')] / med[('baseline', kind + ' cpu')]:.2f} CPU")
    this_met = med[("this", "cold")] < 1.5 and med[("this", "warm")] < 0.3
    return 0 if this_met and (not large or med[("this", "large")] < 1) else 1


if __name__ == "__main__":
    sys.exit(main())
