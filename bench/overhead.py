"""Engine cost per step over a long run: a 500-step pipeline driven by the scripted agent.

Runs the real loop in-process (``specd.engine.seam.run_task``) in a temporary
project and notes the time between consecutive ``step_finished`` events: that
is the engine's own work per step (the scripted agent does almost nothing).
Beside it, in the same run, it times one durable write (temp file, fsync,
rename, fsync of the folder) of the run state's size at that step: the full
state as one JSON document, which is what a save used to write whole.
Goals: engine time per step <= 2x that write, and step 500 within 1.5x of step 10.

    python bench/overhead.py [--steps 500]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
from specd.state.store import StateStore  # noqa: E402
from specd.tasks.project import Project  # noqa: E402
from specd.tasks.task import create_task  # noqa: E402

WINDOW = 9  # steps either side whose median is reported, so one slow fsync does not decide it


def durable_write(folder: Path, size: int, repeats: int = 15) -> float:
    text = "x" * size
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        atomic.write_text(folder / "probe.json", text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=500)
    steps = parser.parse_args().steps
    # Outside any git repository: the per-step commit (specd/git.py) is measured on its own, not here.
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".specd" / "workflows").mkdir(parents=True)
        (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
        pipeline = {"schema_version": "1.0", "mode": "auto",
                    "pipelines": {"main": [{"name": f"s{i}", "workflow": "w.md"} for i in range(steps)]}}
        (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
        script = root / "script.yaml"
        script.write_text("entries:\n  - sticky: true\n    summary: step finished\n", encoding="utf-8")
        project = Project(root)
        task_dir = create_task(project, "bench", "overhead benchmark")
        finished: list[float] = []

        def listen(event: Event) -> None:
            if event.kind == "step_finished":
                finished.append(time.perf_counter())

        real_fsync, fsyncs = os.fsync, [0]

        def counting_fsync(fd: int) -> None:
            fsyncs[0] += 1
            real_fsync(fd)

        os.fsync = counting_fsync  # only to report how many durable writes a step costs
        try:
            code = run_task(project, "bench", mode_flag="auto", agent_spec=f"scripted:{script}",
                            human_for=lambda mode: NoHuman(), events=EventBus(listen)).exit_code
        finally:
            os.fsync = real_fsync
        if code != 0 or len(finished) != steps:
            print(f"the run did not complete (exit {code}, {len(finished)} steps)")
            return 1
        per_step = [b - a for a, b in zip(finished, finished[1:], strict=False)]
        state = StateStore(task_dir, "bench").load()
        assert state is not None
        full = json.dumps(state.to_dict(), indent=2, default=str)
        row = len(full) / max(1, len(state.history))
        rows: list[tuple[int, float, float]] = []
        for at in (10, steps):
            window = per_step[max(0, at - 1 - WINDOW): at - 1]
            engine = statistics.median(window)
            size = int(len(full) - row * (steps - at))  # the state's size when that step finished
            rows.append((at, engine, durable_write(task_dir, size)))
        print(f"{steps}-step pipeline, scripted agent, state of {len(full) / 1024:.0f} KiB at the end; "
              f"{fsyncs[0] / steps:.1f} fsyncs per step")
        for at, engine, write in rows:
            print(f"  step {at:>4}: engine {engine * 1000:7.2f} ms/step; one durable write of the state "
                  f"{write * 1000:6.2f} ms; ratio {engine / write:5.2f}x (goal <= 2x)")
        growth = rows[1][1] / rows[0][1]
        print(f"step {steps} vs step 10: {growth:.2f}x (goal <= 1.5x)")
        met = all(engine / write <= 2 for _, engine, write in rows) and growth <= 1.5
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
