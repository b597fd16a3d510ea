"""What ships in the wheel, that an installed (not editable) specd finds it, and how lightly specd starts."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("anthropic", "openai", "rich", "httpx", "pydantic")

# Runs `specd ARGS` in-process in a fresh interpreter, then prints which heavy modules got imported.
PROBE = f"""
import json, sys
from specd.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({{name.split(".")[0] for name in sys.modules}} & {set(HEAVY)!r})
print("PROBE:" + json.dumps({{"code": code, "heavy": heavy}}), file=sys.__stderr__)
"""


def probe(tmp_path: Path, *argv: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", PROBE, "--project", str(tmp_path), *argv],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("PROBE:")), None)
    assert line is not None, proc.stderr
    result: dict[str, Any] = json.loads(line.removeprefix("PROBE:"))
    return result


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["pipeline", "validate"], ["pipeline", "--help"],
                                  ["hooks", "--help"], ["pipeline", "show", "--json"]], ids=" ".join)
def test_light_commands_do_not_import_heavy_modules(tmp_path: Path, argv: list[str]) -> None:
    result = probe(tmp_path, *argv)
    assert result["code"] in (0, None)
    assert result["heavy"] == [], f"specd {' '.join(argv)} imported {result['heavy']}"


@pytest.mark.skipif(importlib.util.find_spec("specd.commands.status") is None, reason="`specd status` not there yet")
def test_status_stays_light(tmp_path: Path) -> None:
    (tmp_path / ".specd" / "tasks").mkdir(parents=True)
    result = probe(tmp_path, "status")
    assert set(result["heavy"]) <= {"rich"}  # it may draw a table, but never loads the API client


def test_a_failing_validate_stays_light_too(tmp_path: Path) -> None:
    (tmp_path / ".specd").mkdir()
    (tmp_path / ".specd" / "pipeline.json").write_text('{"schema_version": "1.0", "mode": "turbo"}')
    result = probe(tmp_path, "pipeline", "validate")
    assert result["code"] == 2
    assert result["heavy"] == []


def test_probe_would_see_a_heavy_import(tmp_path: Path) -> None:
    # The checks above must be able to fail: `hooks` (a rich table) does load rich.
    assert "rich" in probe(tmp_path, "hooks")["heavy"]


def test_python_m_specd_version_in_a_real_process(tmp_path: Path) -> None:
    from specd import __version__

    proc = subprocess.run([sys.executable, "-m", "specd", "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert __version__ in proc.stdout


# --- the wheel ----------------------------------------------------------------------------------------

WHEEL_MUST_HOLD = [
    "specd/__init__.py",
    "specd/cli.py",
    "specd/_builtin/pipelines/default.json",
    "specd/_builtin/workflows/execute.md",
    "specd/_builtin/workflows/phase-plan.md",
    "specd/_builtin/schemas/pipeline.schema.json",
    "specd/_builtin/hooks/pre-review.md",
    "specd/_builtin/templates/FEATURE.md",
    "specd/web/templates/task.html",  # the dashboard's pages ship as package data
]

needs_hatchling = pytest.mark.skipif(importlib.util.find_spec("hatchling") is None,
                                     reason="hatchling (a dev extra) is not installed")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    wheels = list(out.glob("specd_workflow-*.whl"))  # the distribution is specd-workflow (specd/__init__.py)
    assert len(wheels) == 1, proc.stdout + proc.stderr
    return wheels[0]


@needs_hatchling
def test_wheel_ships_the_builtins(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in WHEEL_MUST_HOLD:
        assert name in names
    # Every built-in workflow the default pipeline names is in the wheel.
    default = json.loads((REPO / "pipelines" / "default.json").read_text(encoding="utf-8"))
    for steps in default["pipelines"].values():
        for step in steps:
            if "workflow" in step:
                assert f"specd/_builtin/workflows/{step['workflow']}" in names
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n]


@needs_hatchling
def test_installed_wheel_finds_its_builtins(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
                          "--disable-pip-version-check", "--target", str(site), str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    # The installed copy comes first on the path; dependencies still come from this venv's site-packages.
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}

    where = subprocess.run(
        [sys.executable, "-c", "import specd, specd.resources as r; print(specd.__file__); "
                               "print(r.builtin_dir('workflows'))"],
        cwd=empty, env=env, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0, where.stderr
    package_file, workflows = (Path(line) for line in where.stdout.splitlines())
    assert package_file.resolve().is_relative_to(site.resolve())
    assert workflows.resolve() == (site / "specd" / "_builtin" / "workflows").resolve()

    show = subprocess.run([sys.executable, "-m", "specd", "pipeline", "show", "--json"],
                          cwd=empty, env=env, capture_output=True, text=True, timeout=60)
    assert show.returncode == 0, show.stderr
    view = json.loads(show.stdout)
    assert view["origin"] == "builtin"
    assert Path(view["source"]).is_relative_to(site.resolve())
    paths = [Path(s["workflow_path"]) for steps in view["pipelines"].values() for s in steps
             if s["workflow_path"]]
    assert len(paths) == 7
    for path in paths:
        assert path.is_file()
        assert path.is_relative_to(site.resolve())

    version = subprocess.run([sys.executable, "-m", "specd", "--version"], cwd=empty, env=env,
                             capture_output=True, text=True, timeout=60)
    assert version.returncode == 0
    assert "specd" in version.stdout
