"""`specd status` over 10,000 tasks with history, against `specd status` over one and `import click`.

One task is run through a 20-step pipeline with the scripted agent, so it has
a real run state and history; its folder is then copied to make the rest.
Every listing is a real `specd status` process (piped: plain text), timed
whole, start-up included, alternately: `python -c "import click"` (the yard
stick), one task, `status task-0` right after an edit of its config.json,
10,000 cold (no status index, as after a fresh clone), 10,000 warm, 10,000
of which a tenth are unfinished (never run: each has a plan to work out), and
with --large 30,000 warm beside 1,000 warm. With --drop, the cold listing also
runs with the page cache dropped (root only; skipped with a message otherwise).
With --baseline, another checkout's specd is timed in the same rounds.
Goals (issue 33): one task and `status TASK` after an edit <= 1.5x import click; 30,000 warm within 3x of
1,000 warm; 10,000 cold <= 0.5 s with a warm page cache, <= 1.5 s with a cold one.

    python bench/status.py [--tasks 10000] [--runs 3] [--large 30000] [--drop] [--baseline /work/main]
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


def unfinished(project: Path, share: float) -> Path:
    """The same project with ``share`` of its tasks never run (a plan each to work out), made once: no run
    state, and a config.json as `specd new` writes it (a finished task's says `stage: complete`, which would
    show it COMPLETE from its files alone)."""
    root = project.with_name(project.name + "-mixed")
    if not root.exists():
        shutil.copytree(project, root, symlinks=True)
        tasks = sorted((root / ".specd" / "tasks").iterdir())
        for folder in tasks[:: max(1, round(1 / share))]:
            for name in (".pipeline-state.json", ".pipeline-state.md", ".pipeline-journal.jsonl",
                         ".pipeline-state.history.jsonl", ".pipeline-state.shape.json"):
                (folder / name).unlink(missing_ok=True)
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            config.update(stage="discussion", phases={"total": 0, "completed": 0, "current": None,
                                                      "current_status": None})
            (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return root


def drop_caches() -> bool:
    """Empty the page cache (root only), so the next listing reads every folder from the disk."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n", encoding="utf-8")
    except OSError:
        return False
    return True


def click_only() -> float:
    env = {"PATH": "/usr/bin:/bin"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-P", "-c", "import click"], env=env, check=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(Path("click"), []).append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed


def clock(project: Path, cold: bool = False, code: Path = ROOT, *args: str, drop: bool = False) -> float:
    """One `specd status` listing (piped, as a script reads it); ``cold`` removes the status index first,
    as after a fresh clone, and ``drop`` the page cache too. Wall time of the whole process, start-up
    included. ``args``: `status TASK`, after an edit of the task's config.json."""
    if cold:
        shutil.rmtree(project / ".specd" / ".cache", ignore_errors=True)
    if args:
        config = project / ".specd" / "tasks" / args[0] / "config.json"
        config.write_text(config.read_text(encoding="utf-8"), encoding="utf-8")  # an edit: new change time
    if drop:
        drop_caches()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = specd(project, "status", *args, code=code)
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
    parser.add_argument("--large", type=int, default=0, help="also time warm listings of this many tasks (30000) "
                                                             "and of 1,000")
    parser.add_argument("--drop", action="store_true", help="also time the cold listing with the page cache dropped")
    parser.add_argument("--baseline", type=Path, help="another checkout whose specd is timed alternately")
    parser.add_argument("--keep", type=Path, help="make the projects here, and reuse them when they are there")
    args = parser.parse_args()
    codes = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    if args.drop and not drop_caches():
        print("--drop: the page cache cannot be dropped here (root only): the cold-disk listing is skipped")
        args.drop = False
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        one, many = make_project(base, 1), make_project(base, args.tasks)
        mixed = unfinished(many, 0.1)
        large = make_project(base, args.large, like=many) if args.large else None
        small = make_project(base, 1000, like=one) if args.large else None
        for _, code in codes:
            clock(one, code=code), clock(many, code=code), clock(mixed, code=code)  # warm the file cache
        times: dict[tuple[str, str], list[float]] = {}
        print(f"start: {load()}")
        for _ in range(args.runs):  # alternately: each code, each kind, in turn
            for name, code in codes:
                record(times, name, "click", click_only(), CPU[Path("click")][-1])
                clock(one, code=code)  # the listing kept again after the last round's edit of task-0
                timed(one, False, code, "one", name, times)
                timed(one, False, code, "edit", name, times, "task-0")
                timed(many, True, code, "cold", name, times)
                if args.drop:
                    timed(many, True, code, "disk", name, times, drop=True)
                timed(many, False, code, "warm", name, times)
                timed(mixed, False, code, "mixed", name, times)
                if large is not None and small is not None:
                    clock(large, code=code), clock(small, code=code)  # the index of this code's format
                    timed(large, False, code, "large", name, times)
                    timed(small, False, code, "small", name, times)
        print(f"end:   {load()}")
        return report(args, codes, times)  # before 40,000 folders are deleted


def timed(project: Path, cold: bool, code: Path, kind: str, name: str, times: dict[tuple[str, str], list[float]],
          *args: str, drop: bool = False) -> None:
    record(times, name, kind, clock(project, cold, code, *args, drop=drop), CPU[project][-1])


def record(times: dict[tuple[str, str], list[float]], name: str, kind: str, wall: float, cpu: float) -> None:
    times.setdefault((name, kind), []).append(wall)
    times.setdefault((name, kind + " cpu"), []).append(cpu)


KINDS = {"click": "python -c 'import click'", "one": "specd status, 1 task", "edit": "status TASK after an edit",
         "cold": "{tasks} tasks, no index", "disk": "{tasks} tasks, no index, page cache dropped",
         "warm": "{tasks} tasks, warm", "mixed": "{tasks} tasks, a tenth unfinished, warm",
         "small": "1000 tasks, warm", "large": "{large} tasks, warm"}


def report(args: argparse.Namespace, codes: list[tuple[str, Path]], times: dict[tuple[str, str], list[float]],
           ) -> int:
    med = {key: statistics.median(value) for key, value in times.items()}
    met = True
    for name, _ in codes:
        click = med[(name, "click")]
        for kind, label in KINDS.items():
            if (name, kind) not in med:
                continue
            wall, cpu = med[(name, kind)], med[(name, kind + " cpu")]
            print(f"[{name}] {label.format(**vars(args)):45} median {wall * 1000:8.1f} ms wall "
                  f"({wall / click:5.2f}x click), {cpu * 1000:7.1f} ms CPU ({cpu / med[(name, 'click cpu')]:5.2f}x)")
        goals = [("one task <= 1.5x click", med[(name, "one")] / click <= 1.5),
                 ("status TASK after an edit <= 1.5x click", med[(name, "edit")] / click <= 1.5),
                 (f"{args.tasks} cold <= 0.5 s", med[(name, "cold")] <= 0.5)]
        if (name, "disk") in med:
            goals.append((f"{args.tasks} cold disk <= 1.5 s", med[(name, "disk")] <= 1.5))
        if (name, "large") in med:
            ratio = med[(name, "large")] / med[(name, "small")]
            goals.append((f"{args.large} warm within 3x of 1000 warm ({ratio:.2f}x)", ratio <= 3))
        print(f"[{name}] goals: " + "; ".join(f"{goal}: {'met' if ok else 'MISSED'}" for goal, ok in goals))
        met = met and (name != "this" or all(ok for _, ok in goals))
    if args.baseline:
        for kind in KINDS:
            if ("this", kind) in med and kind != "click":
                print(f"{kind}: this / baseline = {med[('this', kind)] / med[('baseline', kind)]:.2f} wall, "
                      f"{med[('this', kind + ' cpu')] / med[('baseline', kind + ' cpu')]:.2f} CPU")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
