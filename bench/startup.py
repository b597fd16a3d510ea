"""Start-up of `specd --help`, `specd status` and `specd status TASK` against `python -c "import click"`.

Runs the commands alternately (so machine noise hits them alike) and prints
the median wall-clock time of each and their ratios. Goal: ratio <= 1.5 for both.
Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def clock(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


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
                    "specd status TASK": [sys.executable, "-m", "specd", "--project", tmp, "status", "one-task"]}
        for argv in commands.values():
            clock(argv)  # warm the file cache
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, argv in commands.items():
                times[label].append(clock(argv))
    medians = {label: statistics.median(values) for label, values in times.items()}
    baseline = medians.pop("python -c 'import click'")
    print(f"python -c 'import click': median {baseline * 1000:6.1f} ms over {args.runs} runs")
    worst = 0.0
    for label, value in medians.items():
        worst = max(worst, value / baseline)
        print(f"{label + ':':26}median {value * 1000:6.1f} ms; ratio {value / baseline:.2f}x (goal <= 1.5x)")
    return 0 if worst <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
