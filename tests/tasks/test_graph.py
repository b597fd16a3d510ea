"""The task graph: needs read from config.json, unknown names and cycles refused, dependencies first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specd.errors import TaskError
from specd.tasks import graph
from specd.tasks.project import Project
from specd.tasks.task import create_task


def _project(tmp_path: Path, needs: dict[str, list[str]]) -> Project:
    project = Project(tmp_path)
    for name, wanted in needs.items():
        folder = create_task(project, name, "")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        config["depends_on"] = wanted
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return project


def test_a_diamond_orders_dependencies_first(tmp_path: Path) -> None:
    project = _project(tmp_path, {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "x": []})
    loaded = graph.load(project)
    assert loaded["d"] == ("b", "c")
    assert graph.closure(loaded, ["d"]) == ["a", "b", "c", "d"]
    order = graph.order(loaded)
    assert order.index("a") < order.index("b") < order.index("d")
    assert order.index("c") < order.index("d")
    assert graph.readiness(loaded, "d", {"b": "COMPLETE"}) == graph.Readiness(False, ("c",))
    assert graph.readiness(loaded, "d", {"b": "COMPLETE", "c": "COMPLETE"}).ready


def test_a_cycle_is_named_by_its_path(tmp_path: Path) -> None:
    project = _project(tmp_path, {"a": ["c"], "b": ["a"], "c": ["b"], "d": []})
    with pytest.raises(TaskError) as caught:
        graph.load(project)
    assert "a -> c -> b -> a" in caught.value.message
    assert caught.value.exit_code == 2


def test_an_unknown_name_names_the_file_and_the_fix(tmp_path: Path) -> None:
    project = _project(tmp_path, {"a": ["nope"]})
    with pytest.raises(TaskError) as caught:
        graph.load(project)
    assert "config.json" in caught.value.message
    assert "'nope'" in caught.value.message
    assert caught.value.fix is not None
    assert "specd new nope" in caught.value.fix


@pytest.mark.parametrize("value", ["a", [1], ["../x"], {"a": 1}])
def test_a_badly_shaped_depends_on_is_refused(tmp_path: Path, value: object) -> None:
    project = _project(tmp_path, {"a": []})
    folder = project.tasks_dir / "b"
    create_task(project, "b", "")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["depends_on"] = value
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TaskError, match="depends_on"):
        graph.load(project)


def test_a_task_cannot_need_itself(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="itself"):
        graph.load(_project(tmp_path, {"a": ["a"]}))
