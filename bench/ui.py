"""The dashboard at scale: the tasks page's server time over 1,000 tasks, and how soon a new event reaches a page.

A project of N finished tasks (one real run, its folder copied, as bench/status.py makes it) is served by a
real `specd ui`. The tasks page is fetched over HTTP; its server time is the ``Server-Timing`` the app reports
(reading the status index, building the rows, rendering the template), and the whole request is shown beside
it. Then an event stream of one task is opened, events are appended to its journal, and the time from the
append to the line arriving on the stream is taken. Goals: <= 300 ms server time, <= 1 s event to page.

    python bench/ui.py [--tasks 1000] [--runs 10]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from status import ROOT, make_project  # noqa: E402


def serve(project: Path) -> tuple[subprocess.Popen[str], int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "specd", "--project", str(project), "ui", "--port", "0",
                             "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    url = urlsplit(proc.stdout.readline().strip())
    return proc, url.port or 0, url.query.removeprefix("token=")


def get(port: int, token: str, path: str) -> tuple[float, float, float]:
    """(server ms, server CPU ms, whole request ms) of one page."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start = time.perf_counter()
    connection.request("GET", path, headers={"Cookie": f"specd_ui={token}"})
    reply = connection.getresponse()
    reply.read()
    whole = (time.perf_counter() - start) * 1000
    assert reply.status == 200, reply.status
    timing = dict(part.strip().split(";dur=") for part in (reply.getheader("server-timing") or "").split(","))
    connection.close()
    return float(timing["render"]), float(timing["cpu"]), whole


def event_latency(project: Path, port: int, token: str, runs: int) -> list[float]:
    journal = project / ".specd" / "tasks" / "task-0" / "events.jsonl"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", f"/tasks/task-0/events?offset={journal.stat().st_size}",
                       headers={"Cookie": f"specd_ui={token}"})
    stream = connection.getresponse()
    assert stream.status == 200
    took = []
    for i in range(runs):
        time.sleep(0.3)  # land at a random point of the server's poll
        mark = f"bench-{i}"
        start = time.perf_counter()
        with journal.open("a") as handle:
            handle.write(json.dumps({"at": "2026-01-01T00:00:00", "kind": "notice", "message": mark}) + "\n")
        while mark not in stream.readline().decode():
            pass
        took.append((time.perf_counter() - start) * 1000)
    connection.close()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp), args.tasks)
        proc, port, token = serve(project)
        try:
            get(port, token, "/")  # the first listing builds the status index; later ones read it
            pages = [get(port, token, "/") for _ in range(args.runs)]
            latency = event_latency(project, port, token, args.runs)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    server = statistics.median(p[0] for p in pages)
    cpu = statistics.median(p[1] for p in pages)
    whole = statistics.median(p[2] for p in pages)
    worst = max(latency)
    print(f"tasks page, {args.tasks} tasks: server time median {server:7.1f} ms, whole request {whole:7.1f} ms "
          f"over {args.runs} runs (goal <= 300 ms: {'met' if server <= 300 else 'MISSED'}); its CPU time {cpu:.1f} ms")
    print(f"event to page: median {statistics.median(latency):6.1f} ms, worst {worst:6.1f} ms over {args.runs} "
          f"events (goal <= 1000 ms: {'met' if worst <= 1000 else 'MISSED'})")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (a busy machine "
          "inflates both figures)")
    print(f"ratio: server time {server / 300:.2f} of its goal, worst event latency {worst / 1000:.2f} of its goal")
    return 0 if server <= 300 and worst <= 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
