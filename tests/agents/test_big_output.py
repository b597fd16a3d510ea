"""Acceptance: huge and multi-line output through the real CLI keeps bounded, redacted transcripts.

A command agent prints one 300 MB line and then why it failed: specd's memory stays flat, the
transcript keeps the line's start with a mark saying how much was cut, and the step's reason shows
the real end of the output. A private key printed across lines by an agent or a `run:` hook never
reaches a transcript.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

from brain_harness import Harness

from specd.agents.lines import LINE_LIMIT, cut_mark
from specd.redact import MASK

HUGE = 300_000_000
# The line is written a megabyte at a time: the agent's own memory stays small too, so the peak
# measured over specd's process tree (below) is specd's.
BIG_AGENT = f"""
import sys
sys.stdin.read()
out = sys.stdout.buffer
for _ in range({HUGE // 1_000_000}):
    out.write(b"x" * 1_000_000)
out.write(b"\\nthe real reason: the build broke\\n")
sys.exit(1)
"""
# Runs the CLI and reports the peak resident memory of its whole process tree (Linux: KiB).
MEASURE = """
import resource, subprocess, sys
quiet = subprocess.DEVNULL
code = subprocess.run(sys.argv[1:], stdin=quiet, stdout=quiet, stderr=quiet).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
KEY = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAkeybodyONE", "a2V5Ym9keVRXTw==",
       "-----END RSA PRIVATE KEY-----"]


def test_a_300_mb_line_keeps_a_bounded_transcript_and_specds_memory_flat(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "build", "workflow": "w.md"}]})
    h.new("t")
    agent = h.dir / "big.py"
    agent.write_text(BIG_AGENT, encoding="utf-8")
    argv = h.argv("continue", "t", "--auto", "--agent", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(agent))}")

    measured = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, env=h.env,
                              cwd=h.root, timeout=120, check=False)

    code, peak_kib = (int(n) for n in measured.stdout.split())
    assert code == 1, measured.stderr  # the step failed, as the agent said
    assert peak_kib < 200 * 1024, f"specd's process tree peaked at {peak_kib / 1024:.0f} MB"
    (log,) = h.task_dir("t").glob("transcripts/*/*build.log")
    assert log.stat().st_size < 2 * LINE_LIMIT
    text = log.read_text(encoding="utf-8")
    assert text == "x" * LINE_LIMIT + " " + cut_mark(HUGE - LINE_LIMIT) + "\nthe real reason: the build broke\n"
    assert "[... 299,934,464 bytes of this line cut ...]" in text
    (failure,) = h.status("t")["failure_clusters"]
    assert "(no output)" not in failure["last_note"]
    assert failure["last_note"].endswith("bytes of this line cut ...]\nthe real reason: the build broke")


def test_a_private_key_printed_across_lines_reaches_no_transcript(h: Harness) -> None:
    agent = h.dir / "key.py"  # prints a key, for the agent and for the hook (whose name is its command)
    agent.write_text("import sys\nsys.stdin.read()\nprint(" + repr("\n".join(["key follows", *KEY, "done"]))
                     + ")\n", encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "build", "workflow": "w.md", "hooks": {"post": {"run": command}}}]})
    h.new("t")

    done = h.specd("continue", "t", "--auto", "--agent", f"cmd:{command}")

    assert done.returncode == 0, done.stdout + done.stderr
    logs = sorted(h.task_dir("t").glob("transcripts/*/*.log"))
    assert [p.name.split("-", 1)[1] for p in logs] == ["build.log", "build-post-hook.log"]
    for log in logs:
        lines = log.read_text(encoding="utf-8").splitlines()
        assert lines[-5:-1] == [MASK] * 4, log.name
    everything = "".join(p.read_text(encoding="utf-8", errors="replace")
                         for p in h.task_dir("t").rglob("*") if p.is_file())
    assert "keybody" not in everything
    assert "a2V5Ym9keVRXTw" not in everything
    assert "keybody" not in done.stdout + done.stderr
    shown = h.specd("logs", "t")
    assert shown.returncode == 0, shown.stderr
    assert f"key follows\n{MASK}\n{MASK}\n{MASK}\n{MASK}\ndone\n" in shown.stdout
    assert "keybody" not in shown.stdout
