"""`specd run` side by side: wall time of N tasks at -j N against 1 task alone, plus worktree and CPU cost.

Each task has STEPS steps; the command agent sleeps SLEEP seconds per step and writes one file, so almost
all of a lone task's time is the agent's, and what N tasks add is specd's own work (git included) competing
for the machine's cores. Also: the cost of creating one worktree, and specd's CPU seconds per step (the
children's user+system time over every step run). Goal on a 2-core machine: ratio <= 1.3.

    python bench/parallel.py [--tasks 20] [--steps 5] [--sleep 2] [--many 0 --many-jobs 8]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = ("import os, sys, time; from pathlib import Path; sys.stdin.read(); "
         "time.sleep(float(os.environ['BENCH_SLEEP'])); "
         "Path(f\"out-{os.environ['SPECD_TASK']}-{os.environ['SPECD_STEP']}.txt\").write_text('x')")


def project(where: Path, tasks: int, steps: int) -> Path:
    root = where / "proj"
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}

    def sh(*argv: str) -> None:
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)

    sh("git", "init", "-q", "-b", "main")
    sh(sys.executable, "-m", "specd", "init")
    pipeline = {"schema_version": "1.0", "pipelines": {"main": [
        {"name": f"s{i}", "workflow": "work.md"} for i in range(steps)]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    (root / ".specd" / "workflows" / "work.md").write_text("---\ndescription: w\n---\n\n# work\n")
    sh("git", "add", "-A")
    sh("git", "commit", "-q", "-m", "initial")
    for i in range(tasks):
        sh(sys.executable, "-m", "specd", "new", f"t{i:03d}")
    return root


def timed_run(tasks: int, jobs: int, steps: int, sleep: float) -> tuple[float, float]:
    """Wall seconds of `specd run --all -j jobs`, and the CPU seconds of specd and its children."""
    with tempfile.TemporaryDirectory() as scratch:
        root = project(Path(scratch), tasks, steps)
        agent = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(AGENT)}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "specd", "run", "--all", "--auto", "-j", str(jobs),
                               "--agent", agent], cwd=root, env={**os.environ, "BENCH_SLEEP": str(sleep)},
                              capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"specd run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu


def worktree_cost() -> float:
    with tempfile.TemporaryDirectory() as scratch:
        root = project(Path(scratch), 1, 1)
        start = time.monotonic()
        subprocess.run(["git", "worktree", "add", "-q", "-b", "specd/x", ".specd/worktrees/x", "HEAD"], cwd=root,
                       check=True, capture_output=True)
        return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--many", type=int, default=0, help="also run this many tasks (e.g. 200)")
    parser.add_argument("--many-jobs", type=int, default=8)
    args = parser.parse_args()
    alone, _ = timed_run(1, 1, args.steps, args.sleep)
    side, cpu = timed_run(args.tasks, args.tasks, args.steps, args.sleep)
    print(f"1 task alone:            {alone:7.2f} s")
    print(f"{args.tasks} tasks at -j {args.tasks}:     {side:7.2f} s   ratio {side / alone:.2f} (goal <= 1.3)")
    print(f"specd CPU per step:      {cpu / (args.tasks * args.steps):7.3f} s (agents' sleeps excluded, "
          "their Python start-up included)")
    print(f"creating one worktree:   {worktree_cost():7.3f} s")
    if args.many:
        many, _ = timed_run(args.many, args.many_jobs, args.steps, args.sleep)
        print(f"{args.many} tasks at -j {args.many_jobs}:   {many:7.2f} s")


if __name__ == "__main__":
    main()
