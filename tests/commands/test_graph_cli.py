"""The task graph through the real CLI: `specd new --after`, readiness in `status`, `status --graph`."""

from __future__ import annotations

import json
from pathlib import Path

from brain_harness import Harness


def _rows(h: Harness) -> dict[str, dict]:
    result = h.specd("status", "--json")
    assert result.returncode == 0, result.stderr
    return {row["task"]: row for row in json.loads(result.stdout)["tasks"]}


def _set_needs(h: Harness, task: str, needs: list[str]) -> None:
    path = h.task_dir(task) / "config.json"
    data = json.loads(path.read_text())
    data["depends_on"] = needs
    path.write_text(json.dumps(data))


def _diamond(h: Harness) -> None:
    for args in (("a",), ("b", "--after", "a"), ("c", "--after", "a"), ("d", "--after", "b", "--after", "c")):
        result = h.specd("new", *args)
        assert result.returncode == 0, result.stderr


def test_after_writes_depends_on_and_status_shows_readiness(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "s", "workflow": "w.md"}]})
    _diamond(h)
    assert h.config("d")["depends_on"] == ["b", "c"]
    assert "depends_on" not in h.config("a")

    rows = _rows(h)
    assert rows["a"]["needs"] == []
    assert rows["a"]["ready"] is True
    assert rows["d"]["needs"] == ["b", "c"]
    assert (rows["d"]["ready"], rows["d"]["waits_for"]) == (False, ["b", "c"])

    assert h.cont("a").returncode == 0
    assert h.cont("b").returncode == 0
    rows = _rows(h)
    assert rows["c"]["ready"] is True
    assert (rows["d"]["ready"], rows["d"]["waits_for"]) == (False, ["c"])
    # a COMPLETE row comes from the index now: its needs must be in the cached row too
    assert rows["b"]["needs"] == ["a"]
    assert rows["b"]["status"] == "COMPLETE"
    assert _rows(h)["b"]["needs"] == ["a"]

    plain = h.specd("status").stdout.splitlines()
    assert plain[0].split()[:4] == ["task", "status", "needs", "ready"]
    assert any(line.split()[:6] == ["d", "NOT_STARTED", "b,", "c", "waits", "for"] for line in plain)


def test_unknown_name_and_cycle_are_refused_before_anything_is_made(h: Harness) -> None:
    h.new("a")
    unknown = h.specd("new", "b", "--after", "nope")
    assert unknown.returncode == 2
    assert "'nope' is not a task" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert not h.task_dir("b").exists()

    _set_needs(h, "a", ["b"])  # a names b before b exists: creating b after a would close a cycle
    cycle = h.specd("new", "b", "--after", "a")
    assert cycle.returncode == 2
    assert "cycle: a -> b -> a" in cycle.stderr or "cycle: b -> a -> b" in cycle.stderr
    assert not h.task_dir("b").exists()


def test_a_cycle_in_config_files_lists_every_task_but_the_graph_refuses(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "s", "workflow": "w.md"}]})
    _diamond(h)
    _set_needs(h, "a", ["d"])

    listing = h.specd("status")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()[1:]] == ["a", "b", "c", "d"]
    assert listing.stderr.count("specd: warning") == 1
    assert "a -> d -> b -> a" in listing.stderr

    drawn = h.specd("status", "--graph")
    assert drawn.returncode == 2
    assert "the task graph has a cycle: a -> d -> b -> a" in drawn.stderr
    assert "remove 'd' from depends_on in the config.json of task 'a'" in drawn.stderr


def test_unknown_name_in_a_config_file(h: Harness) -> None:
    h.new("a")
    _set_needs(h, "a", ["ghost"])
    listing = h.specd("status", "--json")
    assert listing.returncode == 0
    assert json.loads(listing.stdout)["tasks"][0]["waits_for"] == ["ghost"]
    assert "'ghost', which is not a task" in listing.stderr
    drawn = h.specd("status", "--graph")
    assert drawn.returncode == 2
    assert ".specd/tasks/a/config.json: depends_on names 'ghost'" in drawn.stderr


def test_graph_text_and_mermaid(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "s", "workflow": "w.md"}]})
    _diamond(h)
    assert h.cont("a").returncode == 0

    text = h.specd("status", "--graph")
    assert text.returncode == 0, text.stderr
    lines = [line.split(None, 2) for line in text.stdout.splitlines()]
    assert [line[0] for line in lines] == ["task", "a", "b", "c", "d"]  # dependencies first
    assert lines[1][1] == "COMPLETE"
    assert lines[2][2].startswith("a (COMPLETE)")
    assert lines[2][2].endswith("ready")
    assert lines[4][2].endswith("waits for b, c")

    mermaid = h.specd("status", "--graph", "--mermaid").stdout.splitlines()
    assert mermaid[0] == "flowchart LR"
    nodes = {line.split("[")[0].strip(): line for line in mermaid if '["' in line}
    ids = {line.split('["')[1].split("<br/>")[0]: node for node, line in nodes.items()}
    assert set(ids) == {"a", "b", "c", "d"}
    edges = {tuple(part.strip() for part in line.split("-->")) for line in mermaid if "-->" in line}
    assert edges == {(ids["a"], ids["b"]), (ids["a"], ids["c"]), (ids["b"], ids["d"]), (ids["c"], ids["d"])}
    assert f"class {ids['a']} done" in "\n".join(mermaid)

    lonely = h.specd("status", "--mermaid")
    assert lonely.returncode == 2
    assert "--mermaid goes with --graph" in lonely.stderr


def test_mermaid_ids_survive_dotted_names(tmp_path: Path) -> None:
    from specd.commands.terminal.graph import mermaid

    drawn = mermaid({"v1.2-x": (), "y": ("v1.2-x",)}, {})
    assert 't0_v1_2_x["v1.2-x<br/>NOT_STARTED"]' in drawn
    assert "t0_v1_2_x --> t1_y" in drawn


def test_graph_says_what_holds_a_task_and_answers_json(h: Harness) -> None:
    """A cancelled or blocked task is never "ready"; --graph --json (and with --mermaid) is one envelope."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "s", "workflow": "w.md"}]})
    _diamond(h)
    assert h.specd("cancel", "b").returncode == 0
    text = h.specd("status", "--graph").stdout
    b_line = next(line for line in text.splitlines() if line.startswith("b "))
    assert "cancelled" in b_line
    assert "ready" not in b_line
    assert next(line for line in text.splitlines() if line.startswith("a ")).endswith("ready")
    shown = h.specd("status", "--graph", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["ok"] is True
    nodes = {node["task"]: node for node in data["graph"]}
    assert nodes["b"]["status"] == "CANCELLED"
    assert nodes["b"]["state"].startswith("cancelled")
    assert nodes["d"] == {"task": "d", "status": "NOT_STARTED", "needs": ["b", "c"], "state": "waits for b, c"}
    assert "mermaid" not in data
    both = json.loads(h.specd("status", "--graph", "--mermaid", "--json").stdout)
    assert both["mermaid"].startswith("flowchart LR")
    assert [node["task"] for node in both["graph"]] == ["a", "b", "c", "d"]
