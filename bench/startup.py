"""Start-up of `specd --help`, `specd status` and `specd status TASK` against `python -c "import click"`.

Runs the commands alternately (so machine noise hits them alike) and prints
the median wall-clock time of each and their ratios. Goal: ratio <= 1.5 for each.
The children may write bytecode (PYTHONDONTWRITEBYTECODE is dropped for them), as an installed specd has its
.pyc files: otherwise every run would compile specd from source while click's are compiled already. The
first runs, untimed, also let `status TASK` keep its answer (.specd/.cache/index.db), as a second call does.
Each child's CPU time (user + system) is shown too: on a busy machine wall time also counts waiting for a core.
Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def clock(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / ".specd").mkdir()
        subprocess.run([sys.executable, "-m", "specd", "--project", tmp, "new", "one-task"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        commands = {"python -c 'import click'": [sys.executable, "-c", "import click"],
                    "specd --help": [sys.executable, "-m", "specd", "--help"],
                    "specd status (one task)": [sys.executable, "-m", "specd", "--project", tmp, "status"],
                    "specd status TASK": [sys.executable, "-m", "specd", "--project", tmp, "status", "one-task"],
                    "specd status TASK --json": [sys.executable, "-m", "specd", "--project", tmp, "status",
                                                 "one-task", "--json"]}
        time.sleep(0.2)  # an answer is kept only from files older than 0.1 s
        for argv in commands.values():
            clock(argv)  # warm the file cache and write the bytecode
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, argv in commands.items():
                times[label].append(clock(argv))
    walls = {label: statistics.median(wall for wall, _ in values) for label, values in times.items()}
    cpus = {label: statistics.median(cpu for _, cpu in values) for label, values in times.items()}
    base, base_cpu = walls.pop("python -c 'import click'"), cpus.pop("python -c 'import click'")
    print(f"python -c 'import click': median {base * 1000:6.1f} ms over {args.runs} runs "
          f"(CPU {base_cpu * 1000:.1f} ms)")
    worst = 0.0
    for label, value in walls.items():
        worst = max(worst, value / base)
        print(f"{label + ':':27}median {value * 1000:6.1f} ms; ratio {value / base:.2f}x (goal <= 1.5x); "
              f"CPU ratio {cpus[label] / base_cpu:.2f}x")
    return 0 if worst <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
