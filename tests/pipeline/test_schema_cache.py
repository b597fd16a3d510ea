"""A schema pass that ran once is remembered per exact file content, so a later `status` skips jsonschema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
