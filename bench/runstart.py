"""What a run's own start and end cost: STEPS steps of `cmd:true` as one run, and as STEPS one-step runs
(`SPECD_STEPS=1`, each a fresh `python -m specd continue`, as a Temporal step's run is when no warm zygote
serves it), in a git repository. Each figure is the CPU of every process the runs start (specd, git, the
jail) per step, from RUSAGE_CHILDREN, so a loaded machine moves it little; wall time beside it.

With --baseline, another checkout's specd is timed in the same rounds, alternately (this, baseline; then
baseline, this), and each figure's ratio to it is printed.

    python bench/runstart.py [--steps 6] [--pairs 4] [--baseline /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "b@x"}


def project(root: Path, steps: int) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    pipeline = {"schema_version": "1.0", "mode": "auto",
                "pipelines": {"main": [{"name": f"s{i}", "workflow": "w.md"} for i in range(steps)]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
    specd(ROOT, root, "init")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True, env={**os.environ, **IDENTITY})
    return root


def specd(code: Path, root: Path, *args: str, steps: str = "") -> None:
    env = {**os.environ, **IDENTITY, "PYTHONPATH": str(code)}
    env.pop("SPECD_STEPS", None)
    if steps:
        env["SPECD_STEPS"] = steps
    done = subprocess.run([sys.executable, "-P", "-m", "specd", *args], cwd=root, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"`specd {' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}")


def clock(code: Path, root: Path, task: str, steps: int, one_step: bool) -> tuple[float, float]:
    """(CPU, wall) seconds per step of one task run through, as one run or as one-step runs."""
    specd(code, root, "new", task)
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    for _ in range(steps if one_step else 1):
        specd(code, root, "continue", task, "--auto", "--agent", "cmd:true", steps="1" if one_step else "")
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    state = json.loads((root / ".specd" / "tasks" / task / ".pipeline-state.json").read_text(encoding="utf-8"))
    if state["status"] != "COMPLETE":
        sys.exit(f"{task}: {state['status']} after {steps} steps")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu / steps, wall / steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--baseline", type=Path, help="another checkout whose specd is timed alternately")
    args = parser.parse_args()
    codes = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    times: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root, number = project(Path(scratch), args.steps), 0
        for pair in range(args.pairs):
            for name, code in codes if pair % 2 == 0 else codes[::-1]:
                for one_step in (False, True):
                    number += 1
                    times.setdefault((name, one_step), []).append(clock(code, root, f"t{number}", args.steps,
                                                                        one_step))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    med = {key: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for key, v in times.items()}
    for name, _ in codes:
        for one_step, label in ((False, f"one run of {args.steps} steps"), (True, f"{args.steps} one-step runs")):
            cpu, wall = med[(name, one_step)]
            versus = ""
            if name == "this" and args.baseline:
                versus = f"; this / baseline: {cpu / med[('baseline', one_step)][0]:.2f}x CPU"
            print(f"[{name}] {label:22} CPU {cpu * 1000:6.1f} ms a step, wall {wall * 1000:6.1f} ms{versus}")
        print(f"[{name}] one-step runs / one run: {med[(name, True)][0] / med[(name, False)][0]:.2f}x CPU")
    print(f"load average {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
