"""Run every bench once and write what each printed against a goal into docs/benchmarks.md.

The table between the ``<!-- figures -->`` markers is replaced whole: every line a bench printed that names a
goal (``goal``, ``met``, ``MISSED``), with the command that printed it, the commit, the machine (CPU model,
cores) and its load before and after, so a figure is never read without the conditions it was taken in. The
prose around the table (why a goal is missed) stays as written.

    python bench/figures.py            # the quick sizes below; --full for each bench's own defaults
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- figures -->", "<!-- /figures -->"
# (bench, the quick arguments); --full drops the arguments
BENCHES = [
    ("startup.py", ["--runs", "11"]),
    ("overhead.py", ["--steps", "300"]),
    ("status.py", ["--tasks", "10000", "--runs", "3", "--large", "30000"]),  # the sizes issue 33 names
    ("parallel.py", ["--tasks", "20", "--steps", "3", "--sleep", "2", "--many", "0"]),
    ("tokens.py", []),
    ("temporal.py", ["--steps", "10", "--pairs", "3", "--no-throughput"]),
]
GOAL = re.compile(r"goal|\bmet\b|MISSED")


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} cores, {platform.system()}"


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run(bench: str, args: list[str]) -> list[str]:
    argv = [sys.executable, str(ROOT / "bench" / bench), *args]
    print(f"$ {' '.join(argv[1:])}", flush=True)  # noqa: T201 (progress: a bench may take minutes)
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    said = [line.strip() for line in done.stdout.splitlines() if GOAL.search(line)]
    if done.returncode not in (0, 1) or not said:  # 1: a goal missed, which the lines say
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        said.append(f"did not finish (exit {done.returncode}): {tail[0]}")
    return said


def table(rows: list[tuple[str, str]], began: str, ended: str, took: float) -> str:
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                         check=False).stdout.strip()
    head = [f"Taken {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit `{rev or '?'}` by "
            f"`python bench/figures.py` in {took / 60:.0f} min, on {machine()}; load average (1, 5, 15 min) "
            f"{began} before, {ended} after.", "", "| Bench | Figure, as printed |", "|---|---|"]
    return "\n".join(head + [f"| `{bench}` | {line.replace('|', '/')} |" for bench, line in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="each bench at its own default sizes")
    parser.add_argument("--only", default="", help="comma-separated bench names (startup,tokens,...)")
    args = parser.parse_args()
    wanted = {name.strip() for name in args.only.split(",") if name.strip()}
    began, start = load(), time.monotonic()
    rows: list[tuple[str, str]] = []
    for bench, quick in BENCHES:
        if wanted and bench.removesuffix(".py") not in wanted:
            continue
        rows += [(bench, line) for line in run(bench, [] if args.full else quick)]
    text = DOC.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"{DOC}: no {START} ... {END} markers to write between", file=sys.stderr)  # noqa: T201
        return 2
    before, _, rest = text.partition(START)
    after = rest.partition(END)[2]
    DOC.write_text(f"{before}{START}\n{table(rows, began, load(), time.monotonic() - start)}\n{END}{after}",
                   encoding="utf-8")
    print(f"wrote {len(rows)} figures to {DOC.relative_to(ROOT)}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
