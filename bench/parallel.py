"""`specd run` side by side: wall time of N tasks at -j N against 1 task alone, plus worktree and CPU cost.

Each task has STEPS steps; the command agent sleeps SLEEP seconds per step and writes one file, so almost
all of a lone task's time is the agent's, and what N tasks add is specd's own work (git included) competing
for the machine's cores. Also: the cost of creating one worktree, and specd's CPU seconds per step (the
children's user+system time over every step run). Goal on a 2-core machine: ratio <= 1.15 (issue 33); the
bench exits 1 when it is missed.

    python bench/parallel.py [--tasks 20] [--steps 5] [--sleep 2] [--many 200 --many-jobs 8]

Every run is also checked as issue 17's acceptance asks: each task COMPLETE, one commit per step on
its branch with no other task's file, and the user's tree, index, stash and HEAD unchanged.
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

GOAL = 1.15  # 20 tasks at -j 20 against one task alone (issue 33)

# A shell agent, not Python: its own start-up would otherwise be most of the CPU measured per step.
AGENT = 'cat >/dev/null; sleep "$BENCH_SLEEP"; echo x > "out-$SPECD_TASK-$SPECD_STEP.txt"'


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
        agent = f"cmd:sh -c {shlex.quote(AGENT)}"
        user_tree = git_view(root)
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
        verify(root, tasks, steps, user_tree)
        return wall, cpu


def git_view(root: Path) -> tuple[str, ...]:
    """What the user sees of their repository: the tree's status, the stash, HEAD and the index."""
    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=root, capture_output=True, text=True, check=True).stdout
    return (git("status", "--porcelain", "--untracked-files=all"), git("stash", "list"), git("rev-parse", "HEAD"),
            git("diff", "--cached"))


def verify(root: Path, tasks: int, steps: int, user_tree: tuple[str, ...]) -> None:
    """The acceptance of the run, not only its time: every task COMPLETE, one commit per step on its own
    branch holding only its own files, and the user's tree, index and stash as they were."""
    names = [f"t{i:03d}" for i in range(tasks)]
    for name in names:
        shown = subprocess.run([sys.executable, "-m", "specd", "--project", str(root / ".specd" / "worktrees" / name),
                                "status", name, "--json"], cwd=root, capture_output=True, text=True, check=False)
        status = json.loads(shown.stdout)["status"] if shown.returncode == 0 else shown.stderr
        if status != "COMPLETE":
            sys.exit(f"{name}: {status}")
        log = subprocess.run(["git", "log", "--no-merges", "--format=%x00%s", "--name-only", f"main..specd/{name}"],
                             cwd=root, capture_output=True, text=True, check=True).stdout
        commits = {block.split("\n", 1)[0]: block.split()[1:] for block in log.split("\0")[1:]}
        files = [f for held in commits.values() for f in held]
        for i in range(steps):
            if f"out-{name}-s{i}.txt" not in commits.get(f"docs({name}): s{i} complete", []):
                sys.exit(f"{name}: no commit of step s{i} holding its file on specd/{name}:\n{log}")
        strays = [f for f in files if f.startswith("out-") and not f.startswith(f"out-{name}-")
                  or f.startswith(".specd/tasks/") and not f.startswith(f".specd/tasks/{name}/")]
        if strays:
            sys.exit(f"{name}: commits hold other tasks' files: {strays}")
    if git_view(root) != user_tree:
        sys.exit("the user's working tree, index, stash or HEAD changed")


def worktree_cost() -> float:
    with tempfile.TemporaryDirectory() as scratch:
        root = project(Path(scratch), 1, 1)
        start = time.monotonic()
        subprocess.run(["git", "worktree", "add", "-q", "-b", "specd/x", ".specd/worktrees/x", "HEAD"], cwd=root,
                       check=True, capture_output=True)
        return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--many", type=int, default=200, help="also run this many tasks (0: skip)")
    parser.add_argument("--many-jobs", type=int, default=8)
    args = parser.parse_args()
    alone, _ = timed_run(1, 1, args.steps, args.sleep)
    side, cpu = timed_run(args.tasks, args.tasks, args.steps, args.sleep)
    print(f"1 task alone:            {alone:7.2f} s")
    ratio = side / alone
    print(f"{args.tasks} tasks at -j {args.tasks}:     {side:7.2f} s   ratio {ratio:.2f} "
          f"(goal <= {GOAL}: {'met' if ratio <= GOAL else 'MISSED'})")
    print(f"specd CPU per step:      {cpu / (args.tasks * args.steps):7.3f} s (a shell agent; each task's "
          "`specd continue` start-up included)")
    print(f"creating one worktree:   {worktree_cost():7.3f} s")
    if args.many:
        many, _ = timed_run(args.many, args.many_jobs, args.steps, args.sleep)
        print(f"{args.many} tasks at -j {args.many_jobs}:   {many:7.2f} s")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
