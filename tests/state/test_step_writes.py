"""A step's move rides on the next save: one durable write a step, and a kill in between re-runs nothing.

After a step with no check and no post hook, the step's own save already holds its row and outcome, and
resuming from it only moves on. So the move is not written on its own: it is saved with the next step's
save before dispatch (or the run's end). These tests take the files as a kill -9 would leave them at that
moment, resume from them, and count the fsyncs a step costs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from specd.engine.seam import run_task
from specd.events import Event, EventBus
from specd.human import NoHuman
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.tasks.project import Project
from specd.tasks.setup import init_project
from specd.tasks.task import create_task

STATE_FILES = (".pipeline-state.json", ".pipeline-state.history.jsonl", ".pipeline-state.shape.json")


def _project(root: Path, steps: list[dict[str, object]], **extra: object) -> Project:
    project = Project(root)
    init_project(project)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    pipeline = {"schema_version": "1.0", "mode": "auto", "pipelines": {"main": steps}, **extra}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")
    create_task(project, "t", "writes")
    return project


def _run(project: Project, agent: str, listen: EventBus | None = None) -> int:
    return run_task(project, "t", mode_flag="auto", agent_spec=agent, human_for=lambda mode: NoHuman(),
                    events=listen or EventBus(lambda event: None)).exit_code


def test_a_kill_after_a_step_whose_move_was_not_written_yet_reruns_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = tmp_path / "ledger.txt"
    project = _project(tmp_path / "p", [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}])
    task_dir = project.tasks_dir / "t"
    image = tmp_path / "image"
    # The command agent notes each step it runs, outside the jail's view of the project's own state.
    monkeypatch.setenv("SPECD_JAIL_WRITE", str(tmp_path))
    agent = f"cmd:sh -c 'echo $SPECD_STEP >> {ledger}'"

    def listen(event: Event) -> None:
        # At a's end the files are as a kill -9 before b's save leaves them: the move past a is not on disk.
        if event.kind == "step_finished" and event.data["step"] == "a":
            image.mkdir()
            for name in STATE_FILES:
                shutil.copy2(task_dir / name, image / name)

    assert _run(project, agent, EventBus(listen)) == 0
    assert ledger.read_text().split() == ["a", "b"]
    for name in STATE_FILES:  # the crash image put back, then resumed
        shutil.copy2(image / name, task_dir / name)
    crashed = StateStore(task_dir, "t").load()
    assert crashed is not None
    assert crashed.current is not None
    assert crashed.current.step == "a"
    assert "step" in crashed.current.completed
    assert _run(project, agent) == 0
    assert ledger.read_text().split() == ["a", "b", "b"]  # a never ran again; b, never recorded, ran once more
    state = StateStore(task_dir, "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    assert [row["step"] for row in state.history if row.get("kind") == "step"] == ["a", "b"]


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    real = os.fsync

    def counting(fd: int) -> None:
        count[0] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return count


def test_a_step_with_nothing_after_it_costs_two_fsyncs_not_four(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted as the difference between a 12-step run and a 4-step one, so the run's own start and end
    (its events, the markdown view) fall out: the history row, and the snapshot before the next dispatch."""
    script = tmp_path / "script.yaml"
    script.write_text("entries:\n  - sticky: true\n    summary: step finished\n", encoding="utf-8")
    count = _fsyncs(monkeypatch)
    spent = {}
    for steps in (4, 12):
        project = _project(tmp_path / str(steps), [{"name": f"s{i}", "workflow": "w.md"} for i in range(steps)])
        before = count[0]
        assert _run(project, f"scripted:{script}") == 0
        spent[steps] = count[0] - before
        state = StateStore(project.tasks_dir / "t", "t").load()
        assert state is not None
        assert state.status == "COMPLETE"
        assert len([row for row in state.history if row.get("kind") == "step"]) == steps
    assert (spent[12] - spent[4]) / 8 == 2, spent


def _saves(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The step current at each save of the run state, in order (None: between steps)."""
    order: list[str | None] = []
    real = StateStore.save

    def noting(self: StateStore, state: RunState, **kwargs: bool) -> None:
        order.append(state.current.step if state.current else None)
        real(self, state, **kwargs)

    monkeypatch.setattr(StateStore, "save", noting)
    return order


def _between(order: list[str | None], first: str, then: str) -> list[str | None]:
    """The saves after the last one with ``first`` current and before the first one with ``then``."""
    last = max(i for i, step in enumerate(order) if step == first)
    return order[last + 1:order.index(then)]


@pytest.mark.parametrize("hooked", [False, True], ids=["nothing after the step", "a post hook"])
def test_the_move_is_saved_on_its_own_only_when_something_ran_after_the_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooked: bool) -> None:
    """With nothing after the step, its move rides on b's save; after a post hook (which resuming from the
    step's save would run again), the move is saved at once, as before."""
    extra = {"hooks": {"post-step": {"run": "true"}}} if hooked else {}
    project = _project(tmp_path, [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}], **extra)
    script = tmp_path / "script.yaml"
    script.write_text("entries:\n  - sticky: true\n    summary: step finished\n", encoding="utf-8")
    order = _saves(monkeypatch)
    assert _run(project, f"scripted:{script}") == 0
    assert _between(order, "a", "b") == ([None] if hooked else [])
    state = StateStore(project.tasks_dir / "t", "t").load()
    assert state is not None
    assert state.status == "COMPLETE"
    assert [row.get("kind") for row in state.history] == (["step", "hook", "step", "hook"] if hooked
                                                           else ["step", "step"])
