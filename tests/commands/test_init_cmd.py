"""`specd init`: creates .specd/, writes an editable pipeline on request, never overwrites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from specd.resources import builtin


def snapshot(root: Path) -> dict[str, tuple[str, bytes | None, int]]:
    """Every file and folder under root: kind, content and mtime (ns)."""
    out: dict[str, tuple[str, bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        stat = path.stat()
        if path.is_dir():
            out[str(path.relative_to(root))] = ("dir", None, stat.st_mtime_ns)
        else:
            out[str(path.relative_to(root))] = ("file", path.read_bytes(), stat.st_mtime_ns)
    return out


def test_init_creates_the_folders(run_cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    result = run_cli("init", cwd=root)
    assert result.code == 0, result.err
    for folder in ("hooks", "workflows", "tasks"):
        assert (root / ".specd" / folder).is_dir()
        assert f".specd/{folder}" in result.out
    assert not [p for p in (root / ".specd").iterdir() if p.name.startswith("pipeline.")]
    config = json.loads((root / ".specd" / "config.json").read_text(encoding="utf-8"))
    assert isinstance(config, dict)


def test_init_with_project_option_creates_it_there(run_cli: Any, tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    result = run_cli("--project", str(target), "init", cwd=tmp_path)
    assert result.code == 0, result.err
    assert (target / ".specd" / "tasks").is_dir()
    assert not (tmp_path / ".specd").exists()


def test_init_from_a_subdirectory_uses_the_enclosing_project(run_cli: Any, project: Any) -> None:
    sub = project.root / "src" / "deep"
    sub.mkdir(parents=True)
    result = run_cli("init", cwd=sub)
    assert result.code == 0, result.err
    assert not (sub / ".specd").exists()
    assert (project.specd / "hooks").is_dir()


def test_init_yaml_writes_a_pipeline_that_validates(run_cli: Any, project: Any) -> None:
    result = run_cli("--project", str(project.root), "init", "--pipeline", "yaml")
    assert result.code == 0, result.err
    written = project.specd / "pipeline.yaml"
    assert written.is_file()
    assert "pipeline.yaml" in result.out

    check = run_cli("--project", str(project.root), "pipeline", "validate")
    assert check.code == 0, check.err
    assert check.err == ""
    assert str(written) in check.out

    # The copy holds the built-in pipeline exactly.
    default = json.loads(builtin("pipelines", "default.json").read_text(encoding="utf-8"))
    assert yaml.safe_load(written.read_text(encoding="utf-8")) == default


def test_init_json_writes_the_builtin_pipeline(run_cli: Any, project: Any) -> None:
    result = run_cli("--project", str(project.root), "init", "--pipeline", "json")
    assert result.code == 0, result.err
    default = json.loads(builtin("pipelines", "default.json").read_text(encoding="utf-8"))
    assert json.loads((project.specd / "pipeline.json").read_text(encoding="utf-8")) == default
    show = run_cli("--project", str(project.root), "pipeline", "show", "--json")
    assert show.json()["origin"] == "project"


def test_editing_the_yaml_copy_reorders_the_pipeline(run_cli: Any, project: Any) -> None:
    assert run_cli("--project", str(project.root), "init", "--pipeline", "yaml").code == 0
    path = project.specd / "pipeline.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    main = data["pipelines"]["main"]
    main[0], main[1] = main[1], main[0]
    data["pipelines"]["phase-execution"][2]["enabled"] = False
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    show = run_cli("--project", str(project.root), "pipeline", "show", "--json")
    assert show.code == 0, show.err
    view = show.json()
    assert [s["name"] for s in view["pipelines"]["main"]] == ["research", "discuss", "plan", "phases"]
    assert [s["enabled"] for s in view["pipelines"]["phase-execution"]] == [True, True, False, True]
    assert view["source"] == str(path.resolve())


@pytest.mark.parametrize("second", [["init"], ["init", "--pipeline", "yaml"], ["init", "--pipeline", "json"]],
                         ids=lambda a: " ".join(a))
def test_running_init_again_changes_nothing(run_cli: Any, tmp_path: Path, second: list[str]) -> None:
    root = tmp_path / "p"
    root.mkdir()
    assert run_cli("--project", str(root), "init", "--pipeline", "yaml").code == 0
    before = snapshot(root)
    result = run_cli("--project", str(root), *second)
    assert result.code == 0, result.err
    assert snapshot(root) == before
    assert not (root / ".specd" / "pipeline.json").exists()
    if "--pipeline" in second:
        assert "pipeline.yaml" in result.out  # says which file it kept


def test_init_never_overwrites_a_users_files(run_cli: Any, project: Any) -> None:
    mine = project.pipeline("# my own pipeline, half written\n", "yml")
    project.file(".specd/config.json", '{"auto_commit_code": false}\n')
    project.file(".specd/.gitignore", "mine\n")
    result = run_cli("--project", str(project.root), "init", "--pipeline", "yaml")
    assert result.code == 0, result.err
    assert mine.read_text(encoding="utf-8") == "# my own pipeline, half written\n"
    assert not (project.specd / "pipeline.yaml").exists()
    assert (project.specd / "config.json").read_text(encoding="utf-8") == '{"auto_commit_code": false}\n'
    assert (project.specd / ".gitignore").read_text(encoding="utf-8") == "mine\n"
    assert (project.specd / "tasks").is_dir()


def test_init_rejects_an_unknown_format(run_cli: Any, project: Any) -> None:
    result = run_cli("--project", str(project.root), "init", "--pipeline", "toml")
    assert result.code == 2
    assert "toml" in result.err
    assert not (project.specd / "pipeline.toml").exists()
