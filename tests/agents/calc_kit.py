"""A one-function project whose check fails until the agent fixes it: the `checks:` tests of every backend."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

# No calc.pyc: a fix as long as the bug, written within the second the first check compiled it, would not be seen.
CHECK = ("import sys\nsys.path.insert(0, '.')\nsys.dont_write_bytecode = True\nfrom calc import add\n"
         "if add(2, 2) != 4:\n    print(f'FAILED test_add: add(2, 2) returned {add(2, 2)}')\n    sys.exit(1)\n")


def calc_project(root: Path, agent: dict[str, Any] | None = None) -> None:
    """``root``: calc.py with a bug, check_calc.py that says so, and an execute step that runs the check."""
    (root / ".specd" / "workflows").mkdir(parents=True)
    (root / ".specd" / "workflows" / "execute.md").write_text("---\ndescription: execute\n---\n\n# Execute\n\nFix.\n")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "check_calc.py").write_text(CHECK)
    check = f"{shlex.quote(sys.executable)} check_calc.py"
    (root / ".specd" / "pipeline.json").write_text(json.dumps({
        "schema_version": "1.0", **({"agent": agent} if agent else {}),
        "pipelines": {"main": [{"name": "execute", "workflow": "execute.md", "checks": [check]}]}}))
