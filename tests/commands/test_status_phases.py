"""`specd status TASK` names a task's phases on one line: all of them when few, an abbreviation when many.

Found by hand: a roadmap the agent wrote with 50,000 `### Phase N` headings made that one line 300 KB long.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from specd.commands.terminal.plain import phase_list


def test_few_phases_are_all_named_and_many_are_abbreviated_with_their_count() -> None:
    assert phase_list([]) == "-"
    assert phase_list(["01", "02", "02.1"]) == "01, 02, 02.1"
    many = [f"{n:02d}" for n in range(1, 50_001)]
    assert phase_list(many) == "01, 02, 03, 04, 05, 06, 07, 08, …, 49998, 49999, 50000 (50,000 phases)"
    assert phase_list(many[:12]) == ", ".join(many[:12])  # twelve fit; thirteen are abbreviated
    assert phase_list(many[:13]).endswith("(13 phases)")


def test_status_of_a_task_with_fifty_thousand_phases_prints_a_short_line(tmp_path: Path) -> None:
    def specd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "specd", "--project", str(tmp_path), *args],
                              capture_output=True, text=True, check=False)

    (tmp_path / ".specd").mkdir()
    assert specd("new", "t").returncode == 0
    roadmap = "# Roadmap\n\n" + "".join(f"### Phase {n}: part {n}\n\n" for n in range(1, 50_001))
    (tmp_path / ".specd" / "tasks" / "t" / "ROADMAP.md").write_text(roadmap, encoding="utf-8")
    shown = specd("status", "t")
    assert shown.returncode == 0, shown.stderr
    [line] = [line for line in shown.stdout.splitlines() if line.startswith("  next: step")]
    assert line.endswith("phases: 01, 02, 03, 04, 05, 06, 07, 08, …, 49998, 49999, 50000 (50,000 phases)")
    assert len(shown.stdout) < 2_000
