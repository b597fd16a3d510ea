"""specd's cost per step over a long run: scripted, `cmd:true`, scripted with git, `cmd:true` with git and the jail.

Each runs the real loop in-process (``specd.engine.seam.run_task``) over an N-step pipeline in a temporary
project, and notes when each step starts: the interval between two starts is one whole step as the agent
sees it (saves, hooks, git, the agent itself). Beside every step, in the same folder and under the same load,
it makes one durable write (temp file, fsync, rename, fsync of the folder) of the run state's snapshot as it
is then, and takes that write's time out of the step's interval. At steps 10, 500 and N it reports the
median interval around that step against the median durable write around it. Also: fsyncs per step (the
probe's own left out), and CPU per step, specd's own and its children's (git, the jail, the command agent).

Goals (issue 21): step N within 1.2x of step 10 in each set-up; specd's CPU per step with git < 60 ms; at
most 4 fsyncs per step with git. Issue 33: a scripted step <= 3x one durable write of its snapshot beside it;
a `cmd:true` step with git and the jail <= 20 ms of CPU, all in (specd's and its children's).

    python bench/overhead.py [--steps 2000] [--only scripted,cmd,git,jail]
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
sys.path.insert(0, str(ROOT))

from specd.engine.seam import run_task  # noqa: E402
from specd.events import Event, EventBus  # noqa: E402
from specd.human import NoHuman  # noqa: E402
from specd.state import atomic  # noqa: E402
from specd.tasks.project import Project  # noqa: E402
from specd.tasks.setup import init_project  # noqa: E402
from specd.tasks.task import create_task  # noqa: E402

WINDOW = 10  # steps either side of the one reported, whose median is taken: one slow fsync does not decide it
IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "b@x"}


def durable_write(folder: Path, size: int) -> tuple[float, float]:
    """One durable write of ``size`` bytes, as a save of the snapshot makes it: (wall, CPU) seconds."""
    text = "x" * size
    start, cpu = time.perf_counter(), time.process_time()
    atomic.write_text(folder / "probe.json", text)
    return time.perf_counter() - start, time.process_time() - cpu


def setup(root: Path, steps: int, git: bool) -> Project:
    project = Project(root)
    if git:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    init_project(project)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    pipeline = {"schema_version": "1.0", "mode": "auto",
                "pipelines": {"main": [{"name": f"s{i}", "workflow": "w.md"} for i in range(steps)]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
    (root / "script.yaml").write_text("entries:\n  - sticky: true\n    summary: step finished\n", encoding="utf-8")
    if git:
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True, env={**os.environ, **IDENTITY})
    create_task(project, "bench", "overhead benchmark")
    return project


def measure(label: str, agent: str, steps: int, git: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = setup(root, steps, git)
        started: list[float] = []
        cpu_at: list[float] = []  # specd's own CPU at each start: immune to other processes' load
        probes: list[float] = []  # the durable write made beside each step
        probe_cpu: list[float] = []
        snapshot_path = project.tasks_dir / "bench" / ".pipeline-state.json"
        probe_dir = root / "probe"
        probe_dir.mkdir()

        def listen(event: Event) -> None:
            if event.kind != "step_started":
                return
            # The probe first, then the mark: its time falls between this step's start and the last one's,
            # and is taken out of that interval below. Its fsyncs are not counted as the step's.
            size = snapshot_path.stat().st_size if snapshot_path.exists() else 800
            counting[0] = False
            wall, cpu = durable_write(probe_dir, size)
            counting[0] = True
            probes.append(wall)
            probe_cpu.append(cpu)
            started.append(time.perf_counter())
            cpu_at.append(time.process_time())

        real_fsync, fsyncs, counting = os.fsync, [0], [True]

        def counting_fsync(fd: int) -> None:
            fsyncs[0] += counting[0]
            real_fsync(fd)

        spec = agent.replace("SCRIPT", str(root / "script.yaml"))
        before = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
        os.fsync = counting_fsync  # only to report how many durable writes a step costs
        try:
            code = run_task(project, "bench", mode_flag="auto", agent_spec=spec, human_for=lambda mode: NoHuman(),
                            events=EventBus(listen)).exit_code
        finally:
            os.fsync = real_fsync
        after = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
        if code != 0 or len(started) != steps:
            sys.exit(f"{label}: the run did not complete (exit {code}, {len(started)} steps)")
        cpu = [(a.ru_utime - b.ru_utime + a.ru_stime - b.ru_stime) / steps for a, b in zip(after, before, strict=True)]
        cpu[0] -= sum(probe_cpu) / steps
        # interval i runs from step i's mark to step i+1's, and holds step i+1's probe: taken out
        per_step = [b - a - probe for a, b, probe in zip(started, started[1:], probes[1:], strict=False)]
        cpu_step = [b - a - probe for a, b, probe in zip(cpu_at, cpu_at[1:], probe_cpu[1:], strict=False)]
        snapshot = snapshot_path.stat().st_size
        at: dict[int, tuple[float, float, float]] = {}
        for step in sorted({10, min(500, steps - WINDOW - 1), steps - WINDOW - 1}):
            window = slice(max(1, step - WINDOW), step + WINDOW)
            at[step] = (statistics.median(per_step[window]), statistics.median(probes[window]),
                        statistics.median(cpu_step[window]))
        return {"label": label, "at": at, "fsyncs": fsyncs[0] / steps, "cpu_self": cpu[0], "cpu_children": cpu[1],
                "snapshot": snapshot}


CONFIGS = {"scripted": ("scripted", "scripted:SCRIPT", False), "cmd": ("cmd:true", "cmd:true", False),
           "git": ("scripted + git", "scripted:SCRIPT", True), "jail": ("cmd:true + git + jail", "cmd:true", True)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--only", default="scripted,cmd,git,jail",
                        help="comma-separated: scripted, cmd, git, jail")
    args = parser.parse_args()
    os.environ.update(IDENTITY)
    met = True
    for key in args.only.split(","):
        label, agent, git = CONFIGS[key]
        result = measure(label, agent, args.steps, git)
        at: dict[int, tuple[float, float, float]] = result["at"]  # type: ignore[assignment]
        print(f"{label}: {args.steps} steps; {result['fsyncs']:.1f} fsyncs/step; CPU/step specd "
              f"{float(result['cpu_self']) * 1000:.1f} ms, children {float(result['cpu_children']) * 1000:.1f} ms; "
              f"snapshot {result['snapshot']} bytes at the end")
        for step, (interval, write, cpu) in at.items():
            print(f"  step {step + 1:>5}: {interval * 1000:7.2f} ms/step ({cpu * 1000:6.2f} ms of specd's CPU); one "
                  f"durable write of the snapshot {write * 1000:6.2f} ms ({interval / write:5.1f}x)")
        if key == "scripted":
            ratio = at[10][0] / at[10][1]
            print(f"  scripted step / one durable write of its snapshot beside it: {ratio:.1f}x (goal <= 3x: "
                  f"{'met' if ratio <= 3 else 'MISSED'})")
            met = met and ratio <= 3
        if key == "jail":
            jailed = "bubblewrap" if shutil.which("bwrap") else "NO bwrap here: the command ran unjailed"
            all_in = (float(result["cpu_self"]) + float(result["cpu_children"])) * 1000
            print(f"  cmd:true step with git and the jail ({jailed}): {all_in:.1f} ms of CPU all in (goal <= 20 ms: "
                  f"{'met' if all_in <= 20 else 'MISSED'})")
            met = met and all_in <= 20 and shutil.which("bwrap") is not None
        growth = at[max(at)][0] / at[10][0]
        cpu_growth = at[max(at)][2] / at[10][2]
        print(f"  {label}, step {max(at) + 1} vs step 11: {growth:.2f}x wall, {cpu_growth:.2f}x specd's CPU "
              "(goal <= 1.2x)")
        met = met and growth <= 1.2
        if git:
            met = met and float(result["cpu_self"]) < 0.060 and float(result["fsyncs"]) <= 4.5
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
