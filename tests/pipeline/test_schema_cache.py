"""A schema pass that ran once is remembered per exact file content, so a later `status` skips jsonschema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specd.pipeline import cache as cache_entries
from specd.pipeline import load_pipeline, snapshot
from specd.tasks.project import Project

PROBE = """
import sys
from specd.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(f"exit={code} jsonschema={'jsonschema' in sys.modules}", file=sys.stderr)
"""


def probe(root: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", PROBE, "--project", str(root), *args], capture_output=True,
                          text=True, check=False)
    return proc.stderr.strip().splitlines()[-1]


def test_a_passed_schema_check_is_reused_until_the_file_changes(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    pipeline = root / ".specd" / "pipeline.json"
    pipeline.write_text(json.dumps({"schema_version": "1.0", "description": "d",
                                    "pipelines": {"main": [{"name": "a", "workflow": "w.md"}]}}), encoding="utf-8")
    assert probe(root, "status") == "exit=0 jsonschema=True"  # the first load runs the real pass
    assert list((root / ".specd" / ".cache").glob("schema-*.json"))
    assert probe(root, "status") == "exit=0 jsonschema=False"
    assert probe(root, "pipeline", "validate") == "exit=0 jsonschema=False"
    again = subprocess.run([sys.executable, "-m", "specd", "--project", str(root), "pipeline", "validate"],
                           capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""  # the remembered pass says what the real one said: nothing

    # Any change to the file is a miss, so a broken file is still caught.
    pipeline.write_text(json.dumps({"schema_version": "1.0", "pipelines": {"main": [{"name": "a"}]}}),
                        encoding="utf-8")
    assert probe(root, "pipeline", "validate") == "exit=2 jsonschema=True"
    # `status` still lists the tasks, and names the broken file (the real pass ran, and said why)
    listing = subprocess.run([sys.executable, "-m", "specd", "--project", str(root), "status"],
                             capture_output=True, text=True, check=False)
    assert listing.returncode == 0, listing.stderr
    assert "pipelines.main[0]" in listing.stderr


def test_the_caches_a_load_writes_cost_no_fsync_and_a_damaged_one_is_a_miss(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worktree of `specd run` starts with an empty `.specd/.cache/`, so each task's run writes the schema
    pass and the pipeline's copy: not durably (a power cut may leave them empty or torn, and then they are
    misses), where each cost two fsyncs."""
    root = tmp_path / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
    (root / ".specd" / "pipeline.json").write_text(json.dumps(
        {"schema_version": "1.0", "pipelines": {"main": [{"name": "a", "workflow": "w.md"}]}}), encoding="utf-8")
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    project = Project(root)
    config = load_pipeline(project)
    assert synced == []
    cache = root / ".specd" / ".cache"
    (schema,) = cache.glob("schema-*.json")
    (copy,) = cache.glob("pipeline-*.json")
    digest = copy.stem.removeprefix("pipeline-")
    assert snapshot.last_loaded(project, digest) == json.loads(copy.read_text(encoding="utf-8"))

    # As a power cut may leave them: the copy is never used, and the schema pass runs again (and is right).
    schema.write_text("", encoding="utf-8")
    copy.write_text(copy.read_text(encoding="utf-8")[:-5], encoding="utf-8")
    assert snapshot.last_loaded(project, digest) is None
    assert cache_entries.lookup(project, schema.stem.removeprefix("schema-")) is None
    assert load_pipeline(project) == config
    assert json.loads(schema.read_text(encoding="utf-8")) == {"warnings": []}
    assert snapshot.last_loaded(project, digest) is not None  # the damaged copy was written again
