"""Where keys are written in a JSON pipeline file: the scan behind duplicate- and unknown-key errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from specd.errors import ConfigError
from specd.pipeline.keys import json_keys, line_of, refuse_duplicates

TEXT = """{
  "pipelines": {"main": [
    {"name": "a {not an object} \\\\", "workflow": "w.md"},
    {"name": "b \\"quoted\\" [x]",
     "hooks": {"pre": {"run": "echo ,"}}}
  ]},
  "mode": "auto"
}
"""


def test_every_key_has_its_json_path_and_line() -> None:
    found = list(json_keys(TEXT))
    assert found == [
        (("pipelines",), 2), (("pipelines", "main"), 2),
        (("pipelines", "main", 0, "name"), 3), (("pipelines", "main", 0, "workflow"), 3),
        (("pipelines", "main", 1, "name"), 4), (("pipelines", "main", 1, "hooks"), 5),
        (("pipelines", "main", 1, "hooks", "pre"), 5), (("pipelines", "main", 1, "hooks", "pre", "run"), 5),
        (("mode",), 7),
    ]


def test_line_of_a_json_and_a_yaml_key(tmp_path: Path) -> None:
    json_file = tmp_path / "pipeline.json"
    json_file.write_text(TEXT)
    assert line_of(json_file, ["pipelines", "main", 1, "hooks", "pre", "run"]) == 5
    assert line_of(json_file, ["nowhere"]) is None
    yaml_file = tmp_path / "pipeline.yaml"
    yaml_file.write_text("pipelines:\n  main:\n    - name: a\n    - name: b\n      enabeld: false\n")
    assert line_of(yaml_file, ["pipelines", "main", 1, "enabeld"]) == 5


def test_a_duplicate_names_its_path_and_both_lines(tmp_path: Path) -> None:
    text = '{"pipelines": {"main": [{"name": "a"}, {"name": "b",\n "name": "c"}]},\n "mode": 1}'
    with pytest.raises(ConfigError, match=r"p\.json:2: pipelines\.main\[1\]\.name: duplicate key 'name' "
                                          r"\(first at line 1, again at line 2\)"):
        refuse_duplicates(tmp_path / "p.json", text)
    refuse_duplicates(tmp_path / "p.json", '{"a": {"x": 1}, "b": {"x": 2}}')  # same key, other objects: fine
