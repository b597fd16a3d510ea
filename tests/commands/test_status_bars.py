"""`specd status TASK` in a terminal: a bar of time and one of cost per step; piped output is unchanged."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from brain_harness import Harness

AGENT = """cmd:printf '{"outcome": "done", "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": %s}}' \
$( [ "$SPECD_STEP" = dear ] && echo 0.9 || echo 0.01 ) > "$SPECD_RESULT\""""


def _in_a_terminal(h: Harness, *args: str, columns: int = 200) -> str:
    """Run specd with stdout on a pseudo-terminal, as a person at a shell sees it."""
    leader, follower = os.openpty()
    env = {**h.env, "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    done = subprocess.run(h.argv(*args), stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE,
                          env=env, cwd=h.root, timeout=120, check=False)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode("utf-8", "replace")


def _cells(text: str, step: str) -> str:
    return next(line for line in text.splitlines() if f" {step} " in line)


def test_each_step_gets_a_time_bar_and_a_cost_bar_in_a_terminal_only(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": n, "workflow": "w.md"} for n in ("quick", "slow", "dear")]})
    h.new("t")
    assert h.specd("continue", "t", "--auto", "--agent", AGENT).returncode == 0
    shown = _in_a_terminal(h, "status", "t")
    assert "took" in shown
    dear, quick = _cells(shown, "dear"), _cells(shown, "quick")
    cost_bar = 10  # the column: | # | step | phase | kind | outcome | tokens | cost | took | time | cost bar |
    assert dear.split("│")[cost_bar].count("█") == 12  # the dear step's cost bar is the full one
    assert quick.split("│")[cost_bar].count("█") == 0
    piped = h.specd("status", "t")
    assert piped.returncode == 0
    assert "took" not in piped.stdout
    assert "█" not in piped.stdout


def test_the_bars_are_as_long_as_the_time_and_the_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from specd.commands.terminal import status

    console = Console(force_terminal=True, width=200, record=True, color_system=None)
    monkeypatch.setattr(status, "out", lambda: console)
    history = [{"step": name, "kind": "step", "outcome": "done", "usage": {"cost_usd": cost}}
               for name, cost in (("quick", 0.01), ("slow", 0.02), ("dear", 0.4))]
    status.render_task({"task": "t", "status": "COMPLETE", "history": history}, seconds=[1.0, 60.0, 2.0])
    text = console.export_text()
    rows = {name: _cells(text, name) for name in ("quick", "slow", "dear")}
    time_bar = {name: row.split("│")[9].count("█") for name, row in rows.items()}
    cost_bar = {name: row.split("│")[10].count("█") for name, row in rows.items()}
    assert time_bar == {"quick": 0, "slow": 12, "dear": 0}
    assert cost_bar == {"quick": 0, "slow": 0, "dear": 12}
    assert "1.0 s" in rows["quick"]
    assert "60.0 s" in rows["slow"]


def test_at_80_columns_the_listing_keeps_every_name_status_and_cost_whole(h: Harness) -> None:
    """Free text gives way, then columns drop; a 30-character name, its status and its cost are never cut.
    Waiting tasks come first, as on the page."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"},
                         {"name": "b", "workflow": "w.md", "pause_in_semi_auto": True}]})
    names = ["authentication-login-flow-abc1", "zz-database-schema-migration-2", "billing-invoice-export-to-csv3"]
    assert all(len(name) == 30 for name in names)
    for name in names:
        h.new(name)
    h.specd("continue", names[0], "--auto", "--agent", AGENT)  # COMPLETE, with a cost
    assert h.specd("continue", names[1], "--semi-auto", "--agent", AGENT).returncode == 3  # a, then b's gate
    shown = re.sub(r"\x1b\[[0-9;]*m", "", _in_a_terminal(h, "status", columns=80))
    rows = [line for line in shown.splitlines() if "│" in line and "task" not in line]
    assert len(rows) == 3, shown
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    assert names[1] in rows[0]  # waiting first, whole
    assert "WAITING_FOR_HUMAN" in rows[0]
    for name in names:
        assert any(name in row for row in rows), (name, shown)
    assert any(names[0] in row and "COMPLETE" in row and "$0.0200" in row for row in rows), shown
    assert "…" not in "".join(rows).split("│")[1]  # no name cut

