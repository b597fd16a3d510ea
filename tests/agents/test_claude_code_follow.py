"""What `status --json` and `logs -f` tell about a claude_code step: its session, its transcript, what it said."""

from __future__ import annotations

import json
from pathlib import Path

import fake_anthropic as fake
from claude_cli import result_events
from test_claude_code_pipeline import OneStep


def test_status_json_carries_each_steps_session_and_transcript_and_logs_shows_its_prose(tmp_path: Path) -> None:
    with fake.FakeAnthropic() as server:
        project = OneStep(tmp_path / "proj", server, tmp_path / "home", {})
        server.push(fake.message(fake.text("Reading the module first.\nIt looks fine."),
                                 fake.tool("StructuredOutput", outcome="approve", summary="fine")))
        run = project.specd("continue", "t")
        status = project.status()
    assert run.returncode == 0, run.stderr
    [row] = [r for r in status["history"] if r["kind"] == "step"]
    [result] = result_events(Path(row["transcript"]))
    assert row["session_id"] == result["session_id"]
    first = json.loads(Path(row["transcript"]).read_text(encoding="utf-8").splitlines()[0])
    assert first["session"] == row["session_id"]  # the live view (`running`) reads the session from this line

    from specd.tasks.transcript_text import readable

    shown = [text for line in Path(row["transcript"]).read_text(encoding="utf-8").splitlines()
             for text in readable(line)]
    assert "Reading the module first." in shown
    assert "It looks fine." in shown
    assert not any(text.startswith("{") for text in shown)  # prose, not raw stream records
