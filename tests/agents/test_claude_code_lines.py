"""Claude Code's stream-json, read in bounded pieces: long messages still parse, a huge line is cut.

The first test drives the real Claude Code CLI against the fake Messages API; the second feeds the
stream reader from a real child process printing a 20 MB line, which no real model answer makes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
from typing import Any

import fake_anthropic as fake

from specd.agents.claude_code.stream import read_stream
from specd.agents.cli_run import JSON_LIMIT, _lines
from specd.agents.lines import LINE_LIMIT, cut_mark
from specd.events import Event, EventBus

LONG = "A long report. " * 20_000  # 300,000 characters: one stream-json line far over LINE_LIMIT


def test_a_message_longer_than_an_output_line_still_parses_whole(cc: Any, project: Any, server: Any,
                                                                 events: list[Event]) -> None:
    assert len(LONG) > LINE_LIMIT
    server.push(fake.message(LONG.strip()), fake.message(fake.tool("StructuredOutput", outcome="approve",
                                                                     summary="done")))

    result = cc.run(project.request())

    assert result.outcome == "approve"
    assert [e.data["text"] for e in events if e.kind == "agent_text"] == [LONG.strip()]
    text = result.transcript.read_text(encoding="utf-8")
    assert "bytes of this line cut" not in text
    assert any(LONG.strip() in json.dumps(json.loads(line)) for line in text.splitlines())


HEAD, TAIL = b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "', b'"}]}}'
SIZE = len(HEAD) + 20_000_000 + len(TAIL)  # the huge line's length in bytes
HUGE_STREAM = f"""
import json, sys
out = sys.stdout.buffer
out.write(json.dumps({{"type": "system", "session_id": "s-1"}}).encode() + b"\\n")
out.write({HEAD!r})
for _ in range(20):
    out.write(b"y" * 1_000_000)
out.write({TAIL!r} + b"\\n")
out.write(json.dumps({{"type": "result", "subtype": "success", "result": "ok", "session_id": "s-1"}}).encode() + b"\\n")
"""


def test_a_huge_stream_line_is_cut_and_recorded_as_unparseable_with_memory_flat() -> None:
    proc = subprocess.Popen([sys.executable, "-c", HUGE_STREAM], stdout=subprocess.PIPE)
    transcript = io.StringIO()
    seen: list[Event] = []
    tracemalloc.start()
    try:
        log = read_stream(_lines(proc), transcript, EventBus(seen.append), "build")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        proc.wait()

    assert log.result is not None
    assert log.result["result"] == "ok"
    assert log.session_id == "s-1"
    assert len(log.errors) == 1
    assert log.errors[0].endswith(cut_mark(SIZE - JSON_LIMIT))
    assert len(log.errors[0]) < 2000
    lines = transcript.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[1].endswith(cut_mark(SIZE - JSON_LIMIT))
    assert len(lines[1]) < JSON_LIMIT + 100
    assert not [e for e in seen if e.kind == "agent_text"]
    assert peak < 8 * JSON_LIMIT  # a few copies of the kept head, never the 20 MB line
