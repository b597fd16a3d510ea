"""Start-up cost of `specd --help` relative to `python -c "import click"`.

Runs both commands alternately (so machine noise hits them alike) and prints
the median wall-clock time of each and their ratio. Goal: ratio <= 1.5.
Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def clock(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    baseline_cmd = [sys.executable, "-c", "import click"]
    specd_cmd = [sys.executable, "-m", "specd", "--help"]
    clock(baseline_cmd), clock(specd_cmd)  # warm the file cache
    baseline, specd = [], []
    for _ in range(args.runs):
        baseline.append(clock(baseline_cmd))
        specd.append(clock(specd_cmd))
    b, s = statistics.median(baseline), statistics.median(specd)
    print(f"python -c 'import click': median {b * 1000:.1f} ms over {args.runs} runs")
    print(f"specd --help:              median {s * 1000:.1f} ms over {args.runs} runs")
    print(f"ratio: {s / b:.2f}x (goal <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
